// @vitest-environment jsdom
// The loop widget on a session longer than its window (issue 38 items 1–2): it holds a part of the
// session at a time (data/loop-window.ts) — a replay starts at the first call from the kernel's
// first part, the scrubber reaches any call of the session (its part read then), playing and
// stepping go on across a part's edge, the history is a page of the session's messages with the
// earlier and later ones a press away, and the counts of stages 05–06 are the whole request's.
// The "kernel" is FakeModel: its pages are the JS twin of the host's (LocalPages over the whole log).
import { afterEach, describe, expect, it } from "vitest";
import { bySeq, LoopWindow, PART } from "../src/data/loop-window";
import { LocalPages } from "../src/data/local";
import type { PageFor, PageQuery } from "../src/data/pages";
import { ClientSessionModel } from "../src/fold";
import { Pricing } from "../src/model/pricing";
import type { FollowItem, SessionEvent } from "../src/types";
import { FakeModel, mount, waitFor as waitForSoon } from "./fake-model";

/** State, not time: as long as a loaded machine needs (the suite runs beside this). */
const waitFor = (pred: () => boolean, ms = 30_000) => waitForSoon(pred, ms);
const SLOW = { timeout: 120_000 };

const TURNS = 300; // 12 events a turn (as tests/benchmarks/_widget_logs.py write_log, chained)
const WINDOW = 500;

/** A long saved session: `turns` turns of prompt → request → a read call → its result → the next
 *  request (chained onto the one before) → the answer. Call k's assistant message is at 12(k-1)+4,
 *  its tool/call one later, its result two later, the request that carries it at 12(k-1)+9. */
function longLog(turns: number): FollowItem[] {
  const events: Record<string, unknown>[] = [];
  let t = 1_800_000_000_000;
  const add = (e: Record<string, unknown>) => { const ev = { seq: events.length, time: (t += 7), ...e }; events.push(ev); return ev.seq; };
  let prev: [number, number] | null = null;
  for (let turn = 1; turn <= turns; turn++) {
    add({ type: "turn/start", turn });
    add({ type: "step/start", turn, step: 1 });
    const u = add({ type: "user/message", turn, message: { role: "user", content: [{ type: "text", text: `turn ${turn}: read file_${turn}.txt` }], source: { kind: "user" } } });
    const first = add({ type: "request/frozen", turn, step: 1, attempt: 1, provider: "script", model: "bench", messageSeqs: prev ? [prev[1], u] : [u], ...(prev ? { baseRequestSeq: prev[0] } : {}) });
    const cid = `c${turn}`, args = JSON.stringify({ file_path: `file_${turn}.txt` });
    const a = add({ type: "assistant/message", turn, step: 1, message: { role: "assistant", content: [{ type: "text", text: "Reading it." }, { type: "tool-call", id: cid, name: "read", arguments: args }] } });
    const c = add({ type: "tool/call", turn, step: 1, callId: cid, name: "read", arguments: args });
    const r = add({ type: "tool/result", turn, step: 1, sourceEventSeqs: [c], message: { role: "tool", toolCallId: cid, content: [{ type: "text", text: `line ${turn}\n`.repeat(3) }], isError: false } });
    add({ type: "step/end", turn, step: 1 });
    add({ type: "step/start", turn, step: 2 });
    const second = add({ type: "request/frozen", turn, step: 2, attempt: 1, provider: "script", model: "bench", messageSeqs: [a, r], baseRequestSeq: first });
    const answer = add({ type: "assistant/message", turn, step: 2, message: { role: "assistant", content: [{ type: "text", text: `File ${turn} has 3 lines.` }] } });
    add({ type: "turn/end", turn, reason: { kind: "completed" } });
    prev = [second, answer];
  }
  return [{ type: "snapshot", sessionId: "s_longloop", header: { type: "session", version: 1, id: "s_longloop", cwd: "/ws", createdAt: 0 },
    cursor: events.length - 1, events, live: { attached: false, status: "idle", turn: null, step: null, assistant: null } } as unknown as FollowItem];
}

const ITEMS = longLog(TURNS);
const N = TURNS * 12;
const assistantOf = (k: number) => 12 * (k - 1) + 4; // call k (1-based)
const frozenOf = (k: number) => 12 * (k - 1) + 9;

let cleanup: (() => void) | null = null;
afterEach(() => { cleanup?.(); cleanup = null; document.body.innerHTML = ""; });

function open(): { model: FakeModel; el: HTMLElement } {
  const model = new FakeModel({ kind: "loop", session_id: "s_longloop", readonly: true, error: "", create_args: {}, window: WINDOW }, ITEMS);
  const m = mount(model);
  cleanup = m.cleanup;
  return { model, el: m.el };
}
const loopEl = (el: HTMLElement) => el.querySelector<HTMLElement>(".dsh-loop") as HTMLElement;
const label = (el: HTMLElement) => el.querySelector(".dsh-scrub-label")?.textContent ?? "";
const current = (el: HTMLElement) => el.querySelector(".dsh-stage[data-state=current]");
const stageValue = (el: HTMLElement, no: number) => el.querySelector(`.dsh-stage[data-stage="${no}"] .dsh-stage-value`)?.textContent ?? "";
const heldRange = (el: HTMLElement) => (loopEl(el).dataset.window ?? "").split("..").map(Number);
// ".dsh-history:not([aria-busy])": the page of the position shown (the last one stays while it comes)
/** Rows the widget draws: history messages, payload cards (a page of them at most, whatever the size). */
const domRows = (el: HTMLElement) => el.querySelectorAll(".dsh-msg, .dsh-card").length;
const press = (el: HTMLElement, cls: string) => (el.querySelector(`.dsh-${cls}`) as HTMLButtonElement).click();

async function scrubTo(el: HTMLElement, call: number): Promise<void> {
  const scrub = el.querySelector<HTMLInputElement>(".dsh-scrubber") as HTMLInputElement;
  await waitFor(() => Number(scrub.max) === TURNS - 1); // the session's calls, counted by the kernel
  scrub.value = String(call - 1);
  scrub.dispatchEvent(new Event("input"));
  await waitFor(() => label(el).startsWith(`call ${call}/${TURNS}: read · c${call}`));
}

describe("the loop widget holds a part of a long session", SLOW, () => {
  it("replays from the session's first call, read from the kernel, holding one part and a page of rows", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}: read · c1`) && current(el)?.getAttribute("data-stage") === "1");
    expect(heldRange(el)).toEqual([0, PART - 1]);
    expect(loopEl(el).querySelector(".dsh-sub")?.textContent).toContain(`${N.toLocaleString("en-US")} events`);
    await waitFor(() => el.querySelectorAll(".dsh-history:not([aria-busy]) .dsh-msg").length === 2); // the prompt and the assistant's call
    expect(stageValue(el, 1)).toBe(`#${assistantOf(1)} read · c1`);
    expect(domRows(el)).toBeLessThanOrEqual(150);
  });

  it("goes to any call of the session by the scrubber, reading its part", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith("call 1/"));
    await scrubTo(el, 201);
    await waitFor(() => current(el)?.getAttribute("data-stage") === "1");
    expect(stageValue(el, 1)).toBe(`#${assistantOf(201)} read · c201`);
    const [lo, hi] = heldRange(el);
    expect(lo).toBeLessThanOrEqual(assistantOf(201));
    expect(hi - lo + 1).toBeLessThanOrEqual(PART);
    // the history at this call: a page of the session's messages (the newest of 400 and more)
    await waitFor(() => el.querySelectorAll(".dsh-history:not([aria-busy]) .dsh-msg").length > 0);
    expect(el.querySelectorAll(".dsh-history:not([aria-busy]) .dsh-msg").length).toBeLessThanOrEqual(150);
    expect(el.querySelector(".dsh-history:not([aria-busy]) .dsh-msg:last-of-type")?.getAttribute("data-seq")).toBe(String(assistantOf(201)));
    expect(domRows(el)).toBeLessThanOrEqual(150);
  });

  it("a move while a part is read wins: the part that arrives after it moves nothing", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}: read · c1`));
    const scrub = el.querySelector<HTMLInputElement>(".dsh-scrubber") as HTMLInputElement;
    await waitFor(() => Number(scrub.max) === TURNS - 1);
    scrub.value = String(TURNS - 1); // the last call: its part is read from the kernel…
    scrub.dispatchEvent(new Event("input"));
    scrub.value = "2"; // …and before it comes, call 3 (in the part held)
    scrub.dispatchEvent(new Event("input"));
    await waitFor(() => label(el).startsWith(`call 3/${TURNS}: read · c3`));
    const model = (el.querySelector(".dsh-loop") as HTMLElement);
    for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 20)); // the far part's answer has come and gone
    expect(label(el)).toMatch(new RegExp(`^call 3/${TURNS}: read · c3`));
    expect(heldRange(el)).toEqual([0, PART - 1]);
    expect(model.dataset.stepIndex).toBe("12");
  });

  it("steps on across the part's last step and back across its first, reading the next and previous parts", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}`));
    // the first part holds calls 1–83 whole (call 84's message is at seq 1000)
    await scrubTo(el, 83);
    for (let i = 0; i < 5; i++) press(el, "forward");
    await waitFor(() => current(el)?.getAttribute("data-stage") === "6");
    expect(stageValue(el, 6)).toBe(`#${frozenOf(83)} request/frozen`);
    expect(heldRange(el)[1]).toBeLessThan(assistantOf(84));
    press(el, "forward"); // past the part: the next one is read, and the next step shown
    await waitFor(() => label(el).startsWith(`call 84/${TURNS}`) && current(el)?.getAttribute("data-stage") === "1");
    expect(heldRange(el)[1]).toBeGreaterThan(frozenOf(84));
    // the new part's first whole call is 63 (its message at seq 748): its first step is the first
    // held, and back from it reads the part before and shows call 62's last stage
    const [first] = heldRange(el);
    expect(first).toBeGreaterThan(assistantOf(62));
    expect(first).toBeLessThanOrEqual(assistantOf(63));
    await scrubTo(el, 63);
    expect(heldRange(el)[0]).toBe(first); // in the part held: nothing read
    await waitFor(() => loopEl(el).dataset.stepIndex === "0");
    press(el, "back");
    await waitFor(() => label(el).startsWith(`call 62/${TURNS}`) && current(el)?.getAttribute("data-stage") === "6");
    expect(heldRange(el)[0]).toBeLessThan(first);
    expect(stageValue(el, 6)).toBe(`#${frozenOf(62)} request/frozen`);
  });

  it("plays on into the next part", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}`));
    await scrubTo(el, 83);
    (el.querySelector('.dsh-speed[data-speed="4"]') as HTMLButtonElement).click();
    for (let i = 0; i < 3; i++) press(el, "forward"); // stage 04 of call 83
    press(el, "play");
    await waitFor(() => label(el).startsWith(`call 84/${TURNS}`), 10_000);
    expect(heldRange(el)[0]).toBeGreaterThan(0);
    press(el, "pause");
  });

  it("shows a page of the history, the earlier and later pages a press away", async () => {
    const { el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}`));
    await scrubTo(el, 201);
    press(el, "forward"); // 02: the history of 01
    const msgs = () => [...el.querySelectorAll<HTMLElement>(".dsh-history:not([aria-busy]) .dsh-msg")].map((m) => Number(m.dataset.seq));
    await waitFor(() => msgs().length > 0 && el.querySelector(".dsh-history-earlier") !== null);
    const newest = msgs();
    expect(el.querySelector(".dsh-history-earlier")?.textContent).toMatch(/^… [\d,]+ earlier messages: show 150 more$/);
    (el.querySelector(".dsh-history-earlier") as HTMLButtonElement).click();
    await waitFor(() => msgs().length > 0 && msgs()[0] < newest[0]);
    expect(Math.max(...msgs())).toBeLessThan(newest[0]);
    expect(el.querySelector(".dsh-history-later")?.textContent).toMatch(/later messages: show them$/);
    (el.querySelector(".dsh-history-later") as HTMLButtonElement).click();
    await waitFor(() => msgs()[0] === newest[0]);
    expect(domRows(el)).toBeLessThanOrEqual(150);
  });

  it("counts the whole request's messages at 05 and 06 (the kernel's), not the part's", async () => {
    const { model, el } = open();
    await waitFor(() => label(el).startsWith(`call 1/${TURNS}`));
    await scrubTo(el, 201);
    for (let i = 0; i < 5; i++) press(el, "forward");
    await waitFor(() => current(el)?.getAttribute("data-stage") === "6" && /messages$/.test(stageValue(el, 5)));
    const kernel = (model as unknown as { pages(): LocalPages }).pages();
    const total = (kernel.get({ kind: "messages", seq: frozenOf(201), request: true, limit: 150 }) as PageFor<PageQuery & { kind: "messages" }>).total;
    expect(total).toBeGreaterThan(400); // every message since the first prompt (the part holds ~80)
    expect(stageValue(el, 5)).toBe(`${total.toLocaleString("en-US")} messages`);
    expect(el.querySelector(".dsh-explain")?.textContent).toContain(`froze ${total} messages`);
    // what the request adds to the one before: the assistant's call and its result, marked
    await waitFor(() => el.querySelectorAll(".dsh-msg-inreq").length === 2);
  });
});

describe("the loop widget on a live session longer than its window", SLOW, () => {
  it("follows the live window, reaches an old call from the kernel, and goes live again as the session grows", async () => {
    const model = new FakeModel({ kind: "loop", session_id: "s_longloop", readonly: false, error: "", create_args: {}, window: WINDOW }, ITEMS);
    const m = mount(model);
    cleanup = m.cleanup;
    const el = m.el;
    // live: the last call's last stage, drawn from the fold's window
    await waitFor(() => label(el).startsWith(`call ${TURNS}/${TURNS}: read · c${TURNS}`) && current(el)?.getAttribute("data-stage") === "6");
    expect(heldRange(el)).toEqual([N - WINDOW, N - 1]);
    // an old call: its part read from the kernel (replay)
    await scrubTo(el, 5);
    expect(heldRange(el)[0]).toBe(0);
    expect(loopEl(el).querySelector(".dsh-badge")?.textContent).toBe("paused");
    // live again: the fold's window
    (el.querySelector(".dsh-live") as HTMLButtonElement).click();
    await waitFor(() => label(el).startsWith(`call ${TURNS}/${TURNS}`) && heldRange(el)[0] === N - WINDOW);
    // the session goes on past half its window again: the fold drops its oldest events, the
    // live calls go on being traced and numbered
    const more = longLog(TURNS + 40)[0] as unknown as { events: SessionEvent[] };
    const added = more.events.slice(N);
    const k = model as unknown as { items: FollowItem[]; kernel: unknown };
    k.items = [{ ...(ITEMS[0] as object), events: more.events, cursor: more.events.length - 1 } as unknown as FollowItem];
    k.kernel = null; // the kernel's pages of the longer log
    const open = model.sent.find((x) => (x.envelope as { type?: string } | undefined)?.type === "open") as { cid: string; envelope: { streamId: string } };
    model.emit({ kind: "batch", cid: open.cid, items: added.map((ev) => JSON.stringify({ type: "item", streamId: open.envelope.streamId, value: { type: "event", event: ev } })) });
    const total = TURNS + 40;
    await waitFor(() => label(el).startsWith(`call ${total}/${total}: read · c${total}`) && current(el)?.getAttribute("data-stage") === "6");
    const held = Number(loopEl(el).dataset.held);
    expect(held).toBeLessThanOrEqual(WINDOW * 1.5);
    expect(heldRange(el)[1]).toBe(more.events.length - 1);
    expect(domRows(el)).toBeLessThanOrEqual(150);
  });
});

describe("LoopWindow", () => {
  const foldOf = (items: FollowItem[], window?: number): ClientSessionModel => {
    const fold = new ClientSessionModel();
    fold.applyAll(items);
    if (window) fold.trim(window);
    return fold;
  };
  const pagesOf = (whole: ClientSessionModel, asked: PageQuery[] = []) => {
    const kernel = new LocalPages(whole, new Pricing());
    return {
      get: <Q extends PageQuery>(q: Q) => { asked.push(q); return kernel.get(q); },
      fetch: <Q extends PageQuery>(q: Q) => { asked.push(q); return kernel.fetch(q); },
      kernel: <Q extends PageQuery>(q: Q) => { asked.push(q); return kernel.fetch(q); },
    };
  };

  it("draws from the fold while it holds the whole session, from its window or a part once it holds less", async () => {
    const whole = foldOf(ITEMS);
    expect(new LoopWindow(whole, pagesOf(whole)).events()).toBe(whole.events);
    const fold = foldOf(ITEMS, WINDOW);
    const asked: PageQuery[] = [];
    const win = new LoopWindow(fold, pagesOf(whole, asked));
    expect(win.windowed).toBe(true);
    const live = win.events();
    expect([live.length, win.lo, win.hi]).toEqual([N, N - WINDOW, N - 1]);
    expect(live[N - WINDOW - 1]).toBeUndefined();
    expect(live[N - 1]?.seq).toBe(N - 1);
    expect(win.moreBefore && !win.moreAfter).toBe(true);
    // the window holds the seq's part: nothing is read
    expect(await win.readAround(N - 100)).toBe(true);
    expect([win.part, asked.length]).toEqual([null, 0]);
    // a part further back: one rows page of PART events, indexed by seq
    expect(await win.readAround(1000)).toBe(true);
    expect([win.lo, win.hi]).toEqual([750, 750 + PART - 1]);
    expect(win.events()[749]).toBeUndefined();
    expect(win.events()[1000]?.seq).toBe(1000);
    expect(asked).toEqual([{ kind: "rows", filter: {}, offset: 750, limit: PART }]);
    // stepping back: the part that ends past the seq
    await win.readAround(1000, true);
    expect(win.lo).toBe(250);
    // a read replaced by a later one is not drawn from
    const a = win.readAround(2000), b = win.readAround(3000);
    expect(await a).toBe(false);
    expect(await b).toBe(true);
    expect(win.lo).toBe(N - PART); // a part never runs past the session's end
    win.toLive();
    expect(win.events()).toBe(live);
  });

  it("numbers the session's calls, its tool/call events, as the kernel lists them", async () => {
    const whole = foldOf(ITEMS);
    const win = new LoopWindow(foldOf(ITEMS, WINDOW), pagesOf(whole));
    expect(win.callTotal()).toBe(TURNS);
    expect(win.callNumber(assistantOf(201) + 1)).toBe(200);
    expect(await win.call(200)).toEqual({ number: 200, seq: assistantOf(201) + 1, turn: 201 });
  });

  it("indexes events by seq, nothing below the first", () => {
    const evs = [{ seq: 5, type: "turn/start" }, { seq: 6, type: "turn/end" }] as unknown as SessionEvent[];
    const out = bySeq(5, evs);
    expect(out.length).toBe(7);
    expect(out[4]).toBeUndefined();
    expect(out[6]?.type).toBe("turn/end");
  });
});
