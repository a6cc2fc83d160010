// @vitest-environment jsdom
// Issue 23: pacing for a classroom, predict-then-reveal from the current stage with a score,
// and the presenter mode of the loop widget (the synced `present` trait, hold by default).
import { afterEach, describe, expect, it } from "vitest";
import { livePace, paceDelay, readingMs, wordCount } from "../src/model/pacing";
import { clickerAction } from "../src/ui/clicker";
import { Player } from "../src/model/playback";
import { PredictMode } from "../src/model/predict";
import { explainStage } from "../src/model/explain";
import { playbackSteps, STAGES, traceToolCalls } from "../src/model/stages";
import type { FollowItem } from "../src/types";
import { FakeModel, mount, waitFor } from "./fake-model";
import { eventsOf, readmeRun, ManualScheduler } from "./helpers";

const cleanups: (() => void)[] = [];
afterEach(() => { while (cleanups.length) cleanups.pop()?.(); });

function run() {
  const events = eventsOf(readmeRun());
  const traces = traceToolCalls(events);
  return { events, traces, steps: playbackSteps(traces, events) };
}

describe("reading pace", () => {
  it("counts the words a reader reads and gives 150 words a minute at 1× (reading aloud), or the pace set", () => {
    expect(wordCount("The tool/result #11 cites [10]: the tool/call of c1.")).toBe(9);
    expect(readingMs(Array(150).fill("word").join(" "))).toBe(60_000);
    expect(readingMs(Array(200).fill("word").join(" "), 200)).toBe(60_000);
    expect(readingMs("")).toBe(0);
    expect(paceDelay(400, 9000, 1)).toBe(9000);
    expect(paceDelay(400, 9000, 2)).toBe(4500);
    expect(paceDelay(3000, 1000, 1)).toBe(3000); // a longer recorded gap stays
  });

  it("the player never leaves a stage before its narration is read, at any speed", () => {
    const { events, traces, steps } = run();
    const narration = (i: number) => { const st = steps[i]; const ex = explainStage(traces[st.call], st.stage, events); return `${STAGES[st.stage - 1].title} — ${ex.title}. ${ex.text}`; };
    for (const speed of [0.5, 1, 2, 4]) {
      const sched = new ManualScheduler();
      const p = new Player(sched);
      p.setSteps(steps);
      p.readMs = (i) => readingMs(narration(i));
      p.setSpeed(speed);
      p.play();
      sched.run(); // the first step at once
      while (sched.queue.length) {
        const from = p.index;
        const ms = sched.run() as number;
        const owed = readingMs(narration(from)) / speed;
        expect(owed).toBeGreaterThan(1000 / speed); // every narration has words to read
        expect(ms).toBeGreaterThanOrEqual(Math.floor(owed));
      }
      expect(p.index).toBe(steps.length - 1);
    }
  });

  it("a live run at reading pace: each stage its reading time while running, a quick catch-up between turns; L is live", () => {
    expect(livePace(9000, 1, true, 320)).toBe(9000);
    expect(livePace(9000, 2, true, 320)).toBe(4500);
    expect(livePace(9000, 1, false, 320)).toBe(320); // the turn ended: catch up
    expect(livePace(100, 1, true, 320)).toBe(320);
    expect(clickerAction({ key: "l", target: document.createElement("div") })).toBe("live");
    expect(clickerAction({ key: "End", target: document.createElement("div") })).toBe("last");
  });

  it("play after the last stage starts again at the first stage, never at no stage", () => {
    const { steps } = run();
    const sched = new ManualScheduler();
    const p = new Player(sched);
    p.setSteps(steps);
    p.seek(steps.length - 1);
    p.play();
    expect(p.index).toBe(0);
    expect(p.current?.stage).toBe(1);
  });
});

describe("predict, then reveal", () => {
  it("starts with the first question at or after the stage shown: from 01 the tool's arguments", () => {
    const { events, traces, steps } = run();
    const pm = new PredictMode();
    pm.set(true);
    expect(pm.start(steps, 0, traces, events)?.kind).toBe("arguments");
    const at3 = steps.findIndex((s) => s.stage === 3);
    expect(pm.start(steps, at3, traces, events)?.kind).toBe("sources"); // not the arguments by wrapping
    const at5 = steps.findIndex((s) => s.stage === 5);
    expect(pm.start(steps, at5, traces, events)?.kind).toBe("messages"); // asked before the history is derived
  });

  it("never wraps: after the last question, nothing is asked; the score counts right / asked", () => {
    const { events, traces, steps } = run();
    const pm = new PredictMode();
    pm.set(true);
    pm.start(steps, 0, traces, events);
    expect(pm.answer({ kind: "arguments", text: traces[0].arguments }, traces, events)).toBe(0);
    expect(pm.score()).toEqual({ right: 1, asked: 1 });
    expect(pm.gate(steps, 3, traces, events)).toBe(true); // before 04: the sources
    pm.answer({ kind: "sources", seqs: [] }, traces, events);
    expect(pm.score()).toEqual({ right: 1, asked: 2 });
    expect(pm.gate(steps, 4, traces, events)).toBe(true); // before 05: the messages
    pm.answer({ kind: "unsure" }, traces, events); // "not sure" is asked, not right
    expect(pm.score()).toEqual({ right: 1, asked: 3 });
    expect(pm.start(steps, 0, traces, events)).toBeNull(); // all answered: no wrap into a question
  });

  it("class vote, then reveal: no guess typed; the presenter marks the vote and it counts once", () => {
    const { events, traces, steps } = run();
    const pm = new PredictMode();
    pm.set(true);
    pm.vote = true;
    pm.start(steps, 0, traces, events);
    pm.answer({ kind: "vote" }, traces, events);
    expect(pm.score()).toEqual({ right: 0, asked: 0 }); // not marked yet
    pm.judge(true);
    pm.judge(false); // once
    expect(pm.score()).toEqual({ right: 1, asked: 1 });
  });
});

function presentLoop(present: boolean): { el: HTMLElement; model: FakeModel } {
  const events = eventsOf(readmeRun());
  const items = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
  const model = new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {}, present }, items);
  (model as unknown as { set: (k: string, v: unknown) => void }).set = (k, v) => { model.state[k] = v; };
  (model as unknown as { save_changes: () => void }).save_changes = () => undefined;
  const { el, cleanup } = mount(model);
  cleanups.push(cleanup);
  return { el, model };
}
const stageOf = (el: HTMLElement) => el.querySelector(".dsh-stage[aria-current=step]")?.getAttribute("data-stage");

describe("presenter mode in the loop widget", () => {
  it("present=True: large-text class, hold and reading pace on; the toggle writes the trait back", async () => {
    const { el, model } = presentLoop(true);
    await waitFor(() => stageOf(el) === "1");
    const root = el.querySelector(".dsh-loop") as HTMLElement;
    expect(root.classList.contains("dsh-present")).toBe(true);
    expect(root.style.getPropertyValue("--dsh-present-size")).toBe("18px");
    expect(root.dataset.stepOnly).toBe("true"); // hold: nothing moves until "next"
    expect(root.dataset.readingPace).toBe("true");
    expect(Number(root.dataset.readMs)).toBeGreaterThan(3000); // the narration of 01 takes seconds to read
    (el.querySelector(".dsh-present-bigger") as HTMLElement).click();
    expect(root.style.getPropertyValue("--dsh-present-size")).toBe("20px");
    (el.querySelector(".dsh-present-btn") as HTMLElement).click();
    expect(root.classList.contains("dsh-present")).toBe(false);
    expect(model.state.present).toBe(false);
  });

  it("predict from 01 asks the tool's arguments first, and continue after the last reveal keeps a stage", async () => {
    const { el } = presentLoop(false);
    await waitFor(() => stageOf(el) === "1");
    (el.querySelector(".dsh-predict-toggle") as HTMLInputElement).click();
    await waitFor(() => el.querySelector(".dsh-predict-ask") !== null);
    expect(el.querySelector(".dsh-predict-ask")?.getAttribute("data-kind")).toBe("arguments");
    expect(stageOf(el)).toBe("1");
    (el.querySelector(".dsh-predict-skip") as HTMLElement).click();
    await waitFor(() => el.querySelector(".dsh-predict-reveal") !== null);
    (el.querySelector(".dsh-stage[data-stage=\"6\"]") as HTMLElement).click();
    await waitFor(() => stageOf(el) === "6");
    expect(el.querySelector(".dsh-predict-score")).toBe(null); // the reveal went with its stage
    (el.querySelector(".dsh-steponly") as HTMLInputElement).click();
    (el.querySelector(".dsh-forward") as HTMLElement).click(); // at the end: stays at 06
    await waitFor(() => stageOf(el) === "6");
    expect(el.querySelector(".dsh-stage[aria-current=step]")).not.toBe(null);
  });
});
