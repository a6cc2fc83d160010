// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { SCRIPT_CONTEXT_WINDOW, Pricing, type PricingTable } from "../src/model/pricing";
import { TrajectoryFold } from "../src/model/trajectory";
import { LocalPages } from "../src/data/local";
import { ClientSessionModel } from "../src/fold";
import { durationsBySeq, approvalSeqs, turnLanes, turnWaterfall } from "../src/model/waterfall";
import { renderTotals } from "../src/ui/totals";
import { createWaterfall } from "../src/ui/waterfall";
import type { SessionEvent } from "../src/types";
import { call, toolMsg, user } from "./helpers";

const TABLE: PricingTable = {
  asOf: "2025-10", contextWindow: null,
  models: {
    "deepseek:deepseek-chat": { price: { input: 0.28, cachedInput: 0.028, output: 0.42 }, contextWindow: 128_000 },
    "openai:gpt-4o": { price: { input: 2.5, cachedInput: 1.25, output: 10 }, contextWindow: 128_000 },
    "vllm:qwen3": { price: null, contextWindow: 32_768 },
  },
};

/** One turn with known times: request 0 → 500 ms (head at 120, first token at 300), a tool call
 *  with a 1,500 ms approval wait, then a second request of 400 ms. */
function turnLog(model = "deepseek-chat", provider = "deepseek"): SessionEvent[] {
  const T = 1_800_000_000_000;
  const evs: Partial<SessionEvent>[] = [
    { type: "turn/start", turn: 1, time: T },
    { type: "step/start", turn: 1, step: 1, time: T },
    { type: "user/message", turn: 1, message: user("go"), time: T },
    { type: "request/frozen", turn: 1, step: 1, attempt: 1, provider, model, messageSeqs: [2], time: T + 10 },
    { type: "assistant/message", turn: 1, step: 1, time: T + 510, firstByteTime: T + 130, stream: [{ kind: "tool-call", index: 0, time0: T + 310 }],
      usage: { inputTokens: 6000, outputTokens: 100, cacheReadTokens: 2000 }, message: { role: "assistant", content: [call("c1")] } },
    { type: "tool/call", turn: 1, step: 1, callId: "c1", name: "read", arguments: "{}", time: T + 520 },
    { type: "approval/asked", callId: "c1", name: "read", time: T + 525 },
    { type: "approval/decided", callId: "c1", name: "read", decision: "allow", time: T + 2025 },
    { type: "tool/result", turn: 1, step: 1, message: toolMsg("c1", "ok"), sourceEventSeqs: [5], time: T + 2225 },
    { type: "step/end", turn: 1, step: 1, time: T + 2230 },
    { type: "request/frozen", turn: 1, step: 2, attempt: 1, provider, model, messageSeqs: [4, 8], baseRequestSeq: 3, time: T + 2240 },
    { type: "assistant/message", turn: 1, step: 2, time: T + 2640, usage: { inputTokens: 9000, outputTokens: 50 }, message: { role: "assistant", content: [{ type: "text", text: "done" }] } },
    { type: "turn/end", turn: 1, reason: { kind: "completed" }, time: T + 2650 },
  ];
  return evs.map((e, i) => ({ ...e, seq: i }) as SessionEvent);
}

describe("pricing lookup (catalog.py's rules)", () => {
  it("finds dated snapshots and bare OpenAI-compatible names, frees script:*, never guesses", () => {
    const p = new Pricing(TABLE);
    expect(p.price("openai", "gpt-4o-2024-08-06")).toEqual(TABLE.models["openai:gpt-4o"].price);
    expect(p.price("openai", "deepseek-chat")).toEqual(TABLE.models["deepseek:deepseek-chat"].price);
    expect(p.price("script", "auto")).toEqual({ input: 0, cachedInput: 0, output: 0 });
    expect(p.price("vllm", "qwen3")).toBeNull();
    expect(p.price("acme", "mystery")).toBeNull();
    expect(p.contextWindow("vllm", "qwen3", null)).toBe(32_768);
    expect(p.contextWindow("vllm", "qwen3", 4096)).toBe(4096);
    expect(new Pricing({ ...TABLE, contextWindow: 8000 }).contextWindow("openai", "gpt-4o", null)).toBe(8000);
  });
});

describe("the trajectory fold and the waterfall model", () => {
  it("measures requests, tools, approvals and the turn, and lays them on one axis", () => {
    const events = turnLog();
    const fold = new TrajectoryFold(new Pricing(TABLE)).update(events);
    const t = fold.totals();
    expect(t).toMatchObject({ turns: 1, requests: 2, toolCalls: 1, inputTokens: 17_000, cachedInputTokens: 2000, outputTokens: 150, durationMs: 2650, approvalWaitMs: 1500 });
    // usage is disjoint (6,000 uncached + 2,000 cached input): 6000 × 0.28 + 2000 × 0.028 +
    // 100 × 0.42, then 9000 × 0.28 + 50 × 0.42 (USD per million)
    expect(t.costUsd).toBeCloseTo((6000 * 0.28 + 2000 * 0.028 + 100 * 0.42 + 9000 * 0.28 + 50 * 0.42) / 1e6, 12);
    expect(t.contextUsed).toBeCloseTo(9000 / 128_000, 12);
    expect(fold.requests[0]).toMatchObject({ ttftMs: 300, firstByteMs: 120, streamMs: 200, durationMs: 500 });
    const w = turnWaterfall(fold, events, 1, 0);
    expect(w?.lanes.map((l) => [l.kind, l.seq, l.durationMs])).toEqual([["request", 3, 500], ["tool", 5, 1705], ["request", 10, 400]]);
    expect(w?.lanes[0].segments.map((s) => [s.kind, s.end - s.start, s.seq])).toEqual([["waiting", 120, 3], ["first-token", 180, 4], ["streaming", 200, 4]]);
    expect(w?.lanes[1].segments.map((s) => [s.kind, s.end - s.start, s.seq])).toEqual([["run", 5, 5], ["approval", 1500, 6], ["run", 200, 8]]);
    expect(w?.lanes[2].segments.map((s) => s.kind)).toEqual(["request"]); // no stream timings recorded
    const d = durationsBySeq(fold, approvalSeqs(events));
    expect([d.get(3), d.get(5), d.get(6), d.get(7), d.get(0), d.get(12)]).toEqual([500, 1705, 1500, 1500, 2650, 2650]);
  });

  it("an unpriced model makes the cost unknown, never zero", () => {
    const fold = new TrajectoryFold(new Pricing(TABLE)).update(turnLog("qwen3", "vllm"));
    const el = renderTotals(fold.totals(), 2650);
    expect(fold.totals().costUsd).toBeNull();
    expect(el.textContent).toContain("cost n/a");
    expect(el.textContent).toContain("17,000 in / 150 out tokens");
    expect(el.textContent).toContain("27% of 33k context"); // 9,000 of 32,768
    const sourced = renderTotals({ ...fold.totals(), windowSource: "server" }, 2650);
    expect(sourced.textContent).toContain("27% of 33k context (server)"); // where the window came from, in sight
  });
});

function pagesOf(events: SessionEvent[]): LocalPages {
  const fold = new ClientSessionModel();
  fold.apply({ type: "snapshot", sessionId: "s_wf", header: { type: "session", version: 1, id: "s_wf", cwd: "/ws", createdAt: 1 }, cursor: events.length - 1,
    events, live: { attached: false, status: "idle", turn: null, step: null, assistant: null } } as never);
  return new LocalPages(fold, new Pricing(TABLE));
}

describe("the waterfall view", () => {
  it("a turn's page gives the lanes the fold gives", () => {
    const events = turnLog();
    const fold = new TrajectoryFold(new Pricing(TABLE)).update(events);
    const page = pagesOf(events).get({ kind: "turn", seq: 5 });
    expect(turnLanes(page, 0)).toEqual(turnWaterfall(fold, events, 1, 0));
    expect([page.turns, page.first, page.previous, page.next, page.last]).toEqual([1, 1, null, null, 1]);
    expect(page.approvals).toEqual([{ callId: "c1", asked: 6, decided: 7 }]);
  });

  it("cuts an idle gap inside the turn out of its axis and says how long it was", async () => {
    const events = turnLog().map((e) => (e.seq >= 9 ? { ...e, time: e.time + 600_000 } : e)); // ten minutes before the step ends
    const view = createWaterfall(pagesOf(events), () => undefined);
    document.body.append(view.el);
    view.update(-1, false);
    const canvas = view.el.querySelector(".dsh-wf-canvas") as HTMLElement;
    expect(canvas.dataset.cuts).toBe("1");
    expect(Number(canvas.dataset.span)).toBe(2225 + 410); // the work (to the result, then the last request), not 10 min 2.65 s
    const mark = view.el.querySelector(".dsh-wf-break") as HTMLElement;
    expect(Number(mark.dataset.idleMs)).toBe(600_015); // from the result (2,225) to the next request (602,240)
    expect(mark.textContent).toBe("10 min 0 s idle");
    view.el.remove();
  });

  it("draws widths proportional to durations, zooms, and selects a bar's event", () => {
    const events = turnLog();
    const picked: number[] = [];
    const view = createWaterfall(pagesOf(events), (seq) => picked.push(seq));
    document.body.append(view.el);
    view.update(-1, false);
    const canvas = view.el.querySelector(".dsh-wf-canvas") as HTMLElement;
    const scale = Number(canvas.dataset.scale);
    const segs = [...view.el.querySelectorAll<HTMLElement>(".dsh-wf-seg")];
    expect(segs).toHaveLength(7);
    const canvasPx = parseFloat(canvas.style.width);
    // bars sit in percent of the span: their pixel width is that share of the canvas
    for (const s of segs) expect((parseFloat(s.style.width) / 100) * canvasPx).toBeCloseTo(Number(s.dataset.ms) * scale, 1);
    (view.el.querySelector(".dsh-wf-in") as HTMLElement).click();
    expect(Number((view.el.querySelector(".dsh-wf-canvas") as HTMLElement).dataset.scale)).toBeCloseTo(scale * 2, 9);
    view.el.dispatchEvent(new KeyboardEvent("keydown", { key: "0", bubbles: true }));
    expect(Number((view.el.querySelector(".dsh-wf-canvas") as HTMLElement).dataset.scale)).toBeCloseTo(scale, 9);
    (view.el.querySelector('.dsh-wf-seg[data-kind="approval"]') as HTMLElement).click();
    expect(picked).toEqual([6]);
    view.update(6, false);
    expect(view.el.querySelector(".dsh-wf-sel")?.getAttribute("data-kind")).toBe("approval");
    view.el.remove();
  });

  it("the offline teaching model: tokens estimated, $0 — offline, the fill of its nominal window", () => {
    const fold = new TrajectoryFold(new Pricing(TABLE)).update(turnLog("auto", "script"));
    const t = fold.totals();
    expect(t.costUsd).toBe(0);
    expect(t.contextWindow).toBe(SCRIPT_CONTEXT_WINDOW);
    const el = renderTotals(t, 2650, true);
    expect(el.textContent).toContain("≈ 17,000 in / 150 out tokens");
    expect(el.querySelector(".dsh-tot-tokens")?.getAttribute("title")).toContain("estimated");
    expect(el.textContent).toContain("$0 — offline");
    expect(el.textContent).toContain("% of 128k context");
    expect(el.querySelector(".dsh-ctx")?.getAttribute("title")).toContain("nominal");
    expect(renderTotals(t, 2650).textContent).toContain("$0.0000"); // without the flag: the plain figures
  });
});
