// @vitest-environment jsdom
// Issue 37: the classroom's second round — reading pace in words a minute, play under "hold",
// predict that hides every value it asks about until the reveal ("not sure" counts as asked),
// class-vote marks that follow the presenter, the focus kept inside the widget after its own
// controls, one current card, and a live run's new turn shown at its 01 with the waiting line.
import { afterEach, describe, expect, it } from "vitest";
import { clampWpm, readingMs, wordCount, WORDS_PER_MINUTE } from "../src/model/pacing";
import { Player } from "../src/model/playback";
import { PredictMode, questionFor } from "../src/model/predict";
import { HIDDEN, maskEvent, maskOf, maskTrace } from "../src/model/predict-mask";
import { TurnTracker, WaitClock } from "../src/model/live-turn";
import { playbackSteps, traceToolCalls } from "../src/model/stages";
import type { FollowItem, SessionEvent } from "../src/types";
import { FakeModel, mount, tick, waitFor } from "./fake-model";
import { eventsOf, readmeRun, streamItems, ManualScheduler } from "./helpers";
import { VIEW_NAMES } from "../src/ui/views";

const cleanups: (() => void)[] = [];
afterEach(() => { while (cleanups.length) cleanups.pop()?.(); document.body.innerHTML = ""; });

const fix = () => {
  const events = eventsOf(streamItems("fix-tests"));
  const traces = traceToolCalls(events);
  return { events, traces, steps: playbackSteps(traces, events) };
};

function replayLoop(items: FollowItem[], state: Record<string, unknown> = {}): { el: HTMLElement; root: HTMLElement; model: FakeModel } {
  const events = eventsOf(items);
  const snap = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
  const model = new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {}, ...state }, snap);
  (model as unknown as { set: (k: string, v: unknown) => void }).set = (k, v) => { model.state[k] = v; };
  (model as unknown as { save_changes: () => void }).save_changes = () => undefined;
  const { el, cleanup } = mount(model);
  cleanups.push(cleanup);
  return { el, root: el.querySelector(".dsh-loop") as HTMLElement, model };
}
const stageOf = (el: HTMLElement) => el.querySelector(".dsh-stage[aria-current=step]")?.getAttribute("data-stage") ?? null;
const click = (el: HTMLElement, sel: string) => (el.querySelector(sel) as HTMLElement).click();
/** Click `sel` once the widget has drawn it (a render may still be due after the state a test waited on). */
async function press(el: HTMLElement, sel: string): Promise<void> {
  await waitFor(() => el.querySelector(sel) !== null);
  click(el, sel);
}
/** Everything the widget's three views and its narration say (each view drawn in turn). */
async function allText(el: HTMLElement): Promise<string> {
  let text = "";
  for (const v of VIEW_NAMES) {
    click(el, `.dsh-tab[data-view="${v}"]`);
    await waitFor(() => el.querySelector(`.dsh-tab[data-view="${v}"]`)?.getAttribute("aria-selected") === "true");
    text += (el.querySelector(".dsh-loop") as HTMLElement).textContent;
  }
  return text;
}

describe("reading pace in words a minute (issue 37 item 5)", () => {
  it("150 words a minute by default, clamped to the control's range; a stage dwells at least its words at that pace", () => {
    expect(WORDS_PER_MINUTE).toBe(150);
    expect(clampWpm(Number.NaN)).toBe(150);
    expect([clampWpm(10), clampWpm(1000), clampWpm(183)]).toEqual([60, 400, 180]);
    const { steps } = fix();
    const sched = new ManualScheduler();
    const p = new Player(sched);
    const words = 30;
    p.setSteps(steps);
    p.readMs = () => readingMs(Array(words).fill("word").join(" "), p.wpm);
    p.setStepOnly(false);
    p.play();
    sched.run();
    const ms = sched.run() as number;
    expect(ms).toBeGreaterThanOrEqual((words / 150) * 60_000); // 12 s for 30 words
    expect(p.owedMs(p.index)).toBe(12_000);
    p.setWpm(300); // faster: the owed time halves, and the stage being played is rescheduled
    expect(p.owedMs(p.index)).toBe(6_000);
    expect(sched.queue).toHaveLength(1);
  });

  it("play while hold is on says why and one press releases the hold and plays", async () => {
    const { el, root } = replayLoop(readmeRun(), { present: true });
    await waitFor(() => stageOf(el) === "1");
    const play = el.querySelector(".dsh-play") as HTMLButtonElement;
    expect(root.dataset.stepOnly).toBe("true");
    expect(play.disabled).toBe(false);
    expect(play.textContent?.trim()).toBe("play (hold on)"); // its play symbol an inline SVG
    expect(play.querySelector("svg.dsh-icon-play")).not.toBeNull();
    expect(play.getAttribute("aria-label")).toMatch(/hold is on/);
    play.click();
    await waitFor(() => root.dataset.stepOnly === "false" && el.querySelector(".dsh-pause") !== null);
    expect((el.querySelector(".dsh-steponly") as HTMLInputElement).checked).toBe(false);
    // the pace is shown and adjustable: the owed time follows it
    expect(root.dataset.wpm).toBe("150");
    const words = Number(root.dataset.words);
    expect(words).toBe(wordCount(`${el.querySelector(".dsh-explain-title")?.textContent} ${el.querySelector(".dsh-explain-text")?.textContent}`));
    expect(Number(root.dataset.readMs)).toBe(Math.ceil((words * 60_000) / 150));
    const wpm = el.querySelector(".dsh-wpm") as HTMLInputElement;
    expect(wpm.value).toBe("150");
    wpm.value = "100";
    wpm.dispatchEvent(new Event("change"));
    await waitFor(() => root.dataset.wpm === "100");
    expect(Number(root.dataset.readMs)).toBe(Math.ceil((words * 60_000) / 100));
  });
});

describe("predict hides what it asks until the reveal (issue 37 items 3, 4)", () => {
  it("a question a press reaches while the player plays holds it: the answer's reveal stays on screen", () => {
    const { events, traces, steps } = fix();
    const sched = new ManualScheduler();
    const player = new Player(sched);
    const pm = new PredictMode();
    pm.set(true);
    player.setSteps(steps);
    player.setStepOnly(false);
    player.gate = (i) => pm.gate(steps, i, traces, events);
    // the sources question (asked at 03, its target the 04) and, one step after, the messages one
    const at4 = steps.findIndex((s) => s.stage === 4);
    player.seek(at4 - 2);
    player.play(); // a tick is due
    player.forward(); // to the 03
    player.forward(); // the sources question before the 04: held
    expect(pm.view(true, player.index).question?.kind).toBe("sources");
    const target = pm.answer({ kind: "unsure" }, traces, events);
    player.seek(target as number);
    while (sched.queue.length) sched.run(); // whatever tick was still due
    expect(player.index).toBe(at4);
    expect(pm.view(true, player.index).reveal?.question.kind).toBe("sources");
  });

  it("asks the messages before the history is derived; 'not sure' is asked, not right; a question stepped past is withdrawn", () => {
    const { events, traces, steps } = fix();
    const qm = steps.map((_, i) => questionFor(steps, i, traces, events)).find((q) => q?.kind === "messages");
    expect(qm && steps[qm.target].stage).toBe(5);
    const pm = new PredictMode();
    pm.set(true);
    const q = pm.start(steps, 0, traces, events);
    expect(q?.kind).toBe("arguments");
    expect(PredictMode.hides(q!, 0)).toBe(true); // masked on its own 01
    pm.answer({ kind: "unsure" }, traces, events);
    expect(pm.score()).toEqual({ right: 0, asked: 1 });
    const at4 = steps.findIndex((s) => s.stage === 4);
    expect(pm.gate(steps, at4, traces, events)).toBe(true);
    expect(pm.view(true, at4 - 1).question?.kind).toBe("sources");
    expect(pm.view(true, at4).question).toBeNull(); // the answer on screen: no question beside it
  });

  it("a class vote shows '?' until marked, then every row follows the presenter's mark", () => {
    const { events, traces, steps } = fix();
    const pm = new PredictMode();
    pm.set(true);
    pm.vote = true;
    const at4 = steps.findIndex((s) => s.stage === 4);
    pm.start(steps, at4, traces, events);
    pm.answer({ kind: "vote" }, traces, events);
    expect(pm.revealed?.marks.every((m) => m.match === null)).toBe(true);
    pm.judge(true);
    expect(pm.revealed?.match).toBe(true);
    expect(pm.revealed?.marks.length).toBeGreaterThan(1);
    expect(pm.revealed?.marks.every((m) => m.match === true)).toBe(true);
    expect(pm.score()).toEqual({ right: 1, asked: 1 });
  });

  it("the mask hides one call's arguments in its trace, its message, its tool/call and stream records", () => {
    const { events, traces, steps } = fix();
    const q = questionFor(steps, 0, traces, events);
    const mask = maskOf(q);
    expect(mask).toEqual({ callId: "c1", kind: "arguments" });
    expect(maskTrace(traces[0], mask).arguments).toBe(HIDDEN);
    expect(maskTrace(traces[1], mask)).toBe(traces[1]);
    const asked = events[traces[0].assistantSeq as number];
    const masked = JSON.stringify(maskEvent(asked, mask));
    expect(masked).not.toContain("node test/run.mjs");
    expect(masked).toContain(HIDDEN);
    expect(JSON.stringify(maskEvent(events[traces[0].callSeq as number], mask))).not.toContain("node test/run.mjs");
    expect(maskOf({ ...q!, kind: "sources" })).toBeNull(); // asked a step early: nothing of it is drawn yet
  });

  it("in the widget: no value a question asks is in its text before the reveal, in any view", async () => {
    const { events, traces } = fix();
    const { el, root } = replayLoop(streamItems("fix-tests"));
    await waitFor(() => stageOf(el) === "1");
    await press(el, ".dsh-predict-toggle");
    await waitFor(() => root.dataset.asking === "arguments");
    const c1 = traces[0];
    expect(stageOf(el)).toBe("1");
    let text = await allText(el);
    expect(text).not.toContain("node test/run.mjs");
    expect(text).toContain(HIDDEN);
    await press(el, ".dsh-predict-skip"); // not sure
    await waitFor(() => el.querySelector(".dsh-predict-reveal") !== null);
    expect((await allText(el))).toContain("node test/run.mjs");
    expect(el.querySelector(".dsh-predict-score")?.textContent).toBe("score: 0 / 1 right");
    // on to the sources question: asked at 03, nothing of [callSeq] on screen
    await press(el, ".dsh-predict-next");
    await waitFor(() => stageOf(el) === "2");
    await press(el, ".dsh-forward");
    await waitFor(() => stageOf(el) === "3");
    await press(el, ".dsh-forward");
    await waitFor(() => root.dataset.asking === "sources");
    expect(stageOf(el)).toBe("3");
    text = await allText(el);
    const cites = (events[c1.resultSeq as number].sourceEventSeqs ?? []).join(", ");
    expect(text).not.toContain(`[${cites}]`);
    expect(text).not.toContain(`cited by #${c1.resultSeq}`);
    expect(el.querySelector('.dsh-stage[data-stage="4"] .dsh-stage-value')?.textContent).toBe("not yet");
    await press(el, ".dsh-predict-submit");
    await waitFor(() => stageOf(el) === "4");
    expect(el.querySelector('.dsh-stage[data-stage="4"] .dsh-stage-value')?.textContent).toBe(`#${c1.resultSeq} cites [${cites}]`);
    // the messages: asked at 04, before 05 derives them
    await press(el, ".dsh-predict-next");
    await waitFor(() => root.dataset.asking === "messages");
    expect(stageOf(el)).toBe("4");
    text = await allText(el);
    expect(text).not.toContain(`request #${c1.frozenSeq} carries`);
    expect(text).not.toMatch(/froze \d+ messages/);
    expect(el.querySelector('.dsh-stage[data-stage="5"] .dsh-stage-value')?.textContent).toBe("derive_messages");
  });

  it("class-vote marks in the reveal follow 'the class got it ✓' everywhere", async () => {
    const { el, root } = replayLoop(streamItems("fix-tests"));
    await waitFor(() => stageOf(el) === "1");
    click(el, ".dsh-predict-toggle");
    await waitFor(() => root.dataset.asking === "arguments");
    click(el, ".dsh-predict-vote");
    await waitFor(() => el.querySelector('.dsh-predict-ask[data-vote="true"]') !== null);
    click(el, ".dsh-predict-submit");
    await waitFor(() => el.querySelector(".dsh-predict-reveal") !== null);
    const reveal = () => el.querySelector(".dsh-predict-reveal") as HTMLElement;
    expect(reveal().querySelectorAll(".dsh-mismatch")).toHaveLength(0);
    expect(reveal().querySelectorAll(".dsh-unmarked").length).toBeGreaterThan(1);
    click(el, '.dsh-predict-judge[data-right="true"]');
    await waitFor(() => reveal().getAttribute("data-match") === "true");
    expect(reveal().querySelectorAll(".dsh-mismatch")).toHaveLength(0);
    expect(reveal().querySelectorAll(".dsh-unmarked")).toHaveLength(0);
    expect(reveal().querySelectorAll(".dsh-match").length).toBeGreaterThan(2); // the title and every row
    expect(el.querySelector(".dsh-predict-score")?.textContent).toBe("score: 1 / 1 right");
  });
});

describe("the focus stays in the widget after its own controls (issue 37 items 1, 6)", () => {
  it("Present, A+ at its end, Reveal and Continue each leave the focus on a sensible element inside", async () => {
    const { el, root } = replayLoop(streamItems("fix-tests"));
    await waitFor(() => stageOf(el) === "1");
    const inside = () => root.contains(document.activeElement) && document.activeElement !== document.body;
    const present = el.querySelector(".dsh-present-btn") as HTMLButtonElement;
    present.focus();
    present.click(); // the header is redrawn around it
    await waitFor(() => root.classList.contains("dsh-present"));
    await tick();
    expect(document.activeElement).toBe(present);
    const bigger = el.querySelector(".dsh-present-bigger") as HTMLButtonElement;
    bigger.focus();
    for (let i = 0; i < 5; i++) bigger.click();
    await tick();
    expect(bigger.disabled).toBe(true);
    expect(document.activeElement).toBe(el.querySelector(".dsh-present-smaller")); // its group's other button
    click(el, ".dsh-predict-toggle");
    await waitFor(() => root.dataset.asking === "arguments");
    const submit = el.querySelector(".dsh-predict-submit") as HTMLButtonElement;
    submit.focus();
    submit.click();
    await waitFor(() => el.querySelector(".dsh-predict-reveal") !== null);
    await tick();
    expect(document.activeElement).toBe(el.querySelector(".dsh-predict-next"));
    (el.querySelector(".dsh-predict-next") as HTMLElement).click();
    await waitFor(() => stageOf(el) === "2");
    await tick();
    expect(inside()).toBe(true);
    expect(document.activeElement).toBe(el.querySelector('.dsh-stage[aria-current="step"]')); // home: the current stage
  });

  it("the focus follows the current stage: no ring stays on a card the stage has left", async () => {
    const { el } = replayLoop(readmeRun());
    await waitFor(() => stageOf(el) === "1");
    const card = el.querySelector('.dsh-stage[data-stage="1"]') as HTMLElement;
    card.focus();
    card.dispatchEvent(new KeyboardEvent("keydown", { key: "PageDown", bubbles: true, cancelable: true }));
    await waitFor(() => stageOf(el) === "2");
    await tick();
    expect((document.activeElement as HTMLElement).dataset.stage).toBe("2");
    expect(document.activeElement?.getAttribute("aria-current")).toBe("step");
  });

  it("a clicker key the widget does not use still never scrolls the notebook", () => {
    const { el } = replayLoop([]);
    const root = el.querySelector(".dsh-loop") as HTMLElement;
    const e = new KeyboardEvent("keydown", { key: "End", bubbles: true, cancelable: true });
    root.dispatchEvent(e); // no steps: "last" does nothing
    expect(e.defaultPrevented).toBe(true);
  });
});

describe("a live run shows where it is (issue 37 item 6)", () => {
  it("tracks the latest turn and whether it has a tool call; the wait clock says whole seconds after the grace", () => {
    const events = eventsOf(readmeRun());
    const traces = traceToolCalls(events);
    const tt = new TurnTracker();
    tt.update(events);
    expect(tt.now(traces)).toMatchObject({ turn: 1, hasCall: true, ended: true });
    const more = [...events, { seq: events.length, time: 0, type: "turn/start", turn: 2 } as SessionEvent];
    tt.update(more);
    expect(tt.now(traces)).toMatchObject({ turn: 2, hasCall: false, ended: false });
    const clock = new WaitClock();
    const a = { attemptId: "x", turn: 2, step: 1, startedAfterSeq: null, blocks: [], chunks: 0, outcome: null, lastChunkTime: null };
    expect(clock.seconds(a, 1000)).toBeNull();
    expect(clock.seconds(a, 1499)).toBeNull();
    expect(clock.seconds(a, 1500)).toBe(0);
    expect(clock.seconds(a, 3600)).toBe(2);
    expect(clock.active).toBe(true);
    expect(clock.seconds({ ...a, chunks: 1 }, 4000)).toBeNull();
    expect(clock.active).toBe(false);
  });

  it("a new turn shows its 01 waiting for the model, not the last call of the turn before", async () => {
    const items = readmeRun();
    const last = eventsOf(items).length;
    const next = [
      { type: "status", status: "running", turn: 2, step: 1 },
      { type: "event", event: { seq: last, time: 1795978800000, type: "turn/start", turn: 2 } },
      { type: "event", event: { seq: last + 1, time: 1795978800001, type: "step/start", turn: 2, step: 1 } },
      { type: "event", event: { seq: last + 2, time: 1795978800002, type: "request/frozen", turn: 2, step: 1, attempt: 1, provider: "script", model: "auto", messageSeqs: [4, 5], repairs: [] } },
      { type: "assistant-stream", frame: { kind: "start", attemptId: "s/2.1.1", turn: 2, step: 1, startedAfterSeq: last + 2 } },
    ] as unknown as FollowItem[];
    const model = new FakeModel({ kind: "loop", session_id: "s_7a96fd6afd3a", readonly: false, error: "", create_args: {}, present: true }, [...items, ...next]);
    const { el, cleanup } = mount(model);
    cleanups.push(cleanup);
    const root = () => el.querySelector(".dsh-loop") as HTMLElement;
    await waitFor(() => stageOf(el) === "1" && (el.querySelector(".dsh-scrub-label")?.textContent ?? "").startsWith("turn 2"));
    expect(el.querySelector(".dsh-explain-title")?.textContent).toContain("Turn 2: waiting for the model");
    expect(el.querySelector(".dsh-explain-text")?.textContent).toContain(`request/frozen #${last + 2} went to the model`);
    expect(el.querySelectorAll('.dsh-stage[aria-current="step"]')).toHaveLength(1);
    // the wait clock shows after its grace and ticks on by itself (WaitClock's arithmetic is tested
    // above with fixed times; here a loaded machine may skip a second, so any later one will do)
    const seconds = () => Number(/^waiting for the model · (\d+) s$/.exec(root().dataset.waiting ?? "")?.[1] ?? "-1");
    await waitFor(() => seconds() >= 0, 15_000);
    expect(el.querySelector(".dsh-waiting")?.textContent).toMatch(/^waiting for the model · \d+ s$/);
    expect(el.querySelector('.dsh-stage[data-stage="1"] .dsh-stage-value')?.textContent).toMatch(/^waiting · \d+ s$/);
    const first = seconds();
    await waitFor(() => seconds() > first, 15_000);
  }, 40_000); // real seconds go by: the clock's grace and a tick, on a machine that may be loaded
});
