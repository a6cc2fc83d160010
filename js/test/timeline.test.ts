// @vitest-environment jsdom
// The session timeline (model/timeline.ts, ui/timeline.ts), the `show --stats` tables in the
// inspector (model/stats-tables.ts, ui/timeline-stats.ts) and compare's "open in inspector".
import { describe, expect, it, vi } from "vitest";
import { LocalPages } from "../src/data/local";
import { ClientSessionModel } from "../src/fold";
import { breaksIn, cutAxis, IDLE_MS, toAxis } from "../src/model/axis-cut";
import { Pricing, costOf, type PricingTable } from "../src/model/pricing";
import { TrajectoryFold, type RequestStats } from "../src/model/trajectory";
import { MIN_SPAN_MS, placeBar, reveal, zoomView } from "../src/model/timeline";
import { fmtCost, fmtStatMs, fmtTokens, formatStats, pyFixed, statsTables } from "../src/model/stats-tables";
import { createTimeline } from "../src/ui/timeline";
import { createStatsView } from "../src/ui/timeline-stats";
import { renderCompareInto } from "../src/compare";
import type { CompareData } from "../src/model/compare";
import type { SessionEvent } from "../src/types";
import { call, toolMsg, user } from "./helpers";

const TABLE: PricingTable = {
  asOf: "2025-10", contextWindow: null,
  models: { "deepseek:deepseek-chat": { price: { input: 0.28, cachedInput: 0.028, output: 0.42 }, contextWindow: 128_000 } },
};
const T = 1_800_000_000_000;

/** Three turns a minute apart: each a request that calls a tool, then a request that answers. */
function session(turns = 3): SessionEvent[] {
  const evs: Partial<SessionEvent>[] = [];
  for (let n = 1; n <= turns; n++) {
    const t0 = T + (n - 1) * 60_000, base = evs.length;
    evs.push(
      { type: "turn/start", turn: n, time: t0 },
      { type: "user/message", turn: n, message: user(`go ${n}`), time: t0 },
      { type: "request/frozen", turn: n, step: 1, attempt: 1, provider: "deepseek", model: "deepseek-chat", messageSeqs: [base + 1], time: t0 + 10 },
      { type: "assistant/message", turn: n, step: 1, time: t0 + 510, usage: { inputTokens: 1000 * n, outputTokens: 40, cacheReadTokens: 200 }, message: { role: "assistant", content: [call(`c${n}`)] } },
      { type: "tool/call", turn: n, step: 1, callId: `c${n}`, name: "bash", arguments: "{}", time: t0 + 520 },
      { type: "tool/result", turn: n, step: 1, message: toolMsg(`c${n}`, "ok\n[exit code: 0]"), sourceEventSeqs: [base + 4], time: t0 + 820 },
      { type: "request/frozen", turn: n, step: 2, attempt: 1, provider: "deepseek", model: "deepseek-chat", messageSeqs: [base + 1], time: t0 + 830 },
      { type: "assistant/message", turn: n, step: 2, time: t0 + 1230, usage: { inputTokens: 12_000, outputTokens: 60 }, message: { role: "assistant", content: [{ type: "text", text: "done" }] } },
      { type: "turn/end", turn: n, reason: { kind: "completed" }, time: t0 + 1240 });
  }
  return evs.map((e, i) => ({ ...e, seq: i }) as SessionEvent);
}
const foldOf = (events: SessionEvent[]) => new TrajectoryFold(new Pricing(TABLE)).update(events);
/** The pages of a session held whole (data/local.ts), as the inspector's panels read them. */
function pagesOf(events: SessionEvent[]): LocalPages {
  const fold = new ClientSessionModel();
  fold.apply({ type: "snapshot", sessionId: "s_tl", header: { type: "session", version: 1, id: "s_tl", cwd: "/ws", createdAt: T }, cursor: events.length - 1,
    events, live: { attached: false, status: "idle", turn: null, step: null, assistant: null } } as never);
  return new LocalPages(fold, new Pricing(TABLE));
}

describe("the session timeline model", () => {
  it("lists every turn then its bars; the axis keeps the work and cuts the idle minutes between turns", () => {
    const events = session();
    const page = pagesOf(events).get({ kind: "timeline", offset: 0, limit: 100, axis: true });
    const stats = foldOf(events).stats();
    expect(page.rows?.map((r) => [r.kind, (r.stats as { seq: number }).seq, r.bar ?? null])).toEqual([
      ["turn", 0, null], ["request", 2, 0], ["tool", 4, 1], ["request", 6, 2],
      ["turn", 9, null], ["request", 11, 3], ["tool", 13, 4], ["request", 15, 5],
      ["turn", 18, null], ["request", 20, 6], ["tool", 22, 7], ["request", 24, 8]]);
    expect([page.total, page.bars]).toEqual([12, 9]);
    // a turn's row holds its figures (what show --stats' turns table says), a request's its cost
    expect(page.rows?.filter((r) => r.kind === "turn").map((r) => r.stats)).toEqual(stats.turns);
    const price = new Pricing(TABLE).price("deepseek", "deepseek-chat")!;
    expect((page.rows?.[1].stats as unknown as RequestStats).costUsd).toBe(costOf(price, { inputTokens: 1000, outputTokens: 40, cacheReadTokens: 200 }));
    // busy: the bars and each turn's start and end, in order, disjoint; each turn 1,240 ms of work, 58.76 s apart
    const busy = page.busy ?? [];
    expect(busy.every(([a, b], i) => a <= b && (i === 0 || busy[i - 1][1] < a))).toBe(true);
    expect([busy[0][0], busy[busy.length - 1][1]]).toEqual([T, T + 120_000 + 1240]);
    const axis = cutAxis(page.busy ?? []);
    expect(axis.span).toBe(3 * 1240);
    expect(axis.breaks.map((b) => [b.at, b.ms])).toEqual([[1240, 58_760], [2480, 58_760]]);
    expect([toAxis(axis, T + 60_000 + 10), toAxis(axis, T + 60_000 + 510), toAxis(axis, T + 30_000)]).toEqual([1250, 1750, 1240]);
    // close marks merge into one (how many gaps, how long in all)
    expect(breaksIn(axis, 0, 3720, 2000)).toEqual([{ at: 1240, count: 2, ms: 117_520 }]);
    expect(breaksIn(axis, 0, 3720, 100).map((b) => b.count)).toEqual([1, 1]);
  });

  it("keeps gaps up to the threshold to scale", () => {
    const axis = cutAxis([[0, 100], [100 + IDLE_MS, 2000], [2000 + IDLE_MS + 1, 4000]]);
    expect(axis.span).toBe(2000 + 999);
    expect(axis.breaks).toEqual([{ at: 2000, ms: IDLE_MS + 1, t0: 2000 }]);
    expect(toAxis(axis, 3500)).toBe(2000 + 499);
  });

  it("zooms around an anchor, never past the session nor below the minimum, and reveals a bar", () => {
    const span = 1000;
    const full = { from: 0, to: span };
    expect(zoomView(full, span, 2)).toEqual({ from: 250, to: 750 });
    expect(zoomView(full, span, 2, 0)).toEqual({ from: 0, to: 500 });
    expect(zoomView(full, span, 4, 1000)).toEqual({ from: 750, to: 1000 });
    expect(zoomView({ from: 250, to: 750 }, span, 0.5)).toEqual(full);
    expect(zoomView(full, span, 0.5)).toEqual(full);
    let v = full;
    for (let i = 0; i < 20; i++) v = zoomView(v, span, 2);
    expect(v.to - v.from).toBe(MIN_SPAN_MS);
    expect(reveal({ from: 0, to: 100 }, span, 500, 520)).toEqual({ from: 425, to: 525 });
    expect(reveal({ from: 400, to: 500 }, span, 100, 120)).toEqual({ from: 95, to: 195 });
    expect(reveal({ from: 0, to: 100 }, span, 10, 20)).toEqual({ from: 0, to: 100 });
    expect(placeBar({ from: 100, to: 200 }, 150, 300)).toEqual({ left: 50, width: 50 });
    expect(placeBar({ from: 100, to: 200 }, 300, 400)).toBeNull();
  });
});

describe("show --stats' formatting in the browser", () => {
  it("rounds as Python's format does (half to even on an exact tie)", () => {
    expect([pyFixed(0.125, 2), pyFixed(0.375, 2), pyFixed(6.25, 1), pyFixed(12.35, 1), pyFixed(2.5, 0)]).toEqual(["0.12", "0.38", "6.2", "12.3", "2"]);
    expect([fmtStatMs(999), fmtStatMs(1125), fmtStatMs(61_250), fmtStatMs(null)]).toEqual(["999 ms", "1.12 s", "1m01.2s", "-"]);
    expect([fmtTokens(9999), fmtTokens(12_050), fmtCost(null), fmtCost(0.00123), fmtCost(2.5)]).toEqual(["9,999", "12.1k", "cost n/a", "$0.0012", "$2.50"]);
  });

  it("lays out the four tables as the CLI does", () => {
    const stats = foldOf(session(2)).stats();
    const [reqs, tools, turns] = statsTables(stats);
    expect(reqs.rows[0].slice(0, 4)).toEqual(["2", "1.1.1", "deepseek:deepseek-chat", "completed"]);
    expect(tools.rows[0]).toEqual(["4", "1.1", "c1", "bash", "300 ms", "-", "-", "-", "exit 0"]); // DECIDED "-": a log from before issue 36
    expect(turns.rows.map((r) => r[0])).toEqual(["1", "2"]);
    const text = formatStats(stats);
    expect(text.split("\n")[0]).toBe("requests");
    expect(text).toMatch(/\ntotal: 2\.48 s · 4 requests · 2 tool calls · 27\.4k in \/ 200 out tokens/);
  });

  it("draws them as HTML tables whose seq links select the event", () => {
    const onSelect = vi.fn();
    const fold = foldOf(session(2));
    const v = createStatsView(pagesOf(session(2)), onSelect);
    v.update();
    const tables = [...v.el.querySelectorAll("table")];
    expect(tables.map((t) => t.dataset.table)).toEqual(["requests", "tools", "turns", "decisions by mode"]);
    const want = statsTables(fold.stats());
    // an empty table (no decisions in a log from before issue 36) shows one "(none)" row
    tables.forEach((t, i) => expect([...t.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent)))
      .toEqual(want[i].rows.length ? want[i].rows : [["(none)"]]));
    expect(v.el.querySelector(".dsh-stats-total")?.textContent).toMatch(/^total: 2\.48 s · 4 requests/);
    (v.el.querySelector('button[data-seq="13"]') as HTMLButtonElement).click();
    expect(onSelect).toHaveBeenCalledWith(13);
  });

  it("pages the decisions by mode as the CLI's table: a row per mode, no seq link (a mode has no event)", () => {
    const events = session(1);
    const t0 = events[events.length - 1].time;
    const more: Partial<SessionEvent>[] = [
      { type: "mode/changed", mode: "plan", previous: "default", by: "widget", time: t0 + 1 },
      { type: "approval/decided", callId: "c1", name: "bash", decision: "deny", by: "mode", mode: "plan", decider: "mode", time: t0 + 2 },
    ];
    const all = [...events, ...more.map((e, i) => ({ ...e, seq: events.length + i }) as SessionEvent)];
    const pages = pagesOf(all);
    const page = pages.get({ kind: "stats", table: "decisions", offset: 0, limit: 100, seq: 3 });
    expect([page.total, page.index]).toEqual([1, null]);
    expect(page.rows).toEqual(foldOf(all).stats().decisions);
    const v = createStatsView(pages, vi.fn());
    v.update();
    const table = v.el.querySelector('table[data-table="decisions by mode"]') as HTMLTableElement;
    expect(table.classList.contains("dsh-stats-decisions-by-mode")).toBe(true);
    const rows = [...table.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent));
    expect(rows).toEqual(statsTables(foldOf(all).stats())[3].rows);
    expect(rows[0].slice(0, 4)).toEqual(["plan", "1", "0", "1"]);
    expect(table.querySelector("button")).toBeNull();
    expect(pages.get({ kind: "facets" }).mode).toBe("plan");
  });
});

describe("the timeline view", () => {
  const mount = () => {
    const onSelect = vi.fn();
    const v = createTimeline(pagesOf(session()), onSelect);
    document.body.append(v.el);
    v.update(-1, false);
    const settle = async () => { for (let i = 0; i < 5; i++) await Promise.resolve(); };
    return { v, onSelect, settle, key: (key: string) => v.el.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true })) };
  };

  it("shows each turn's label, time, tokens and cost, and each request bar's", () => {
    const { v } = mount();
    const groups = [...v.el.querySelectorAll(".dsh-tl-group")];
    expect(groups.map((g) => g.querySelector(".dsh-tl-name")?.textContent)).toEqual(["turn 1", "turn 2", "turn 3"]);
    expect(groups[0].querySelector(".dsh-tl-metrics")?.textContent).toBe("1.24 s · 13.2k in / 100 out · $0.0037");
    const bar = v.el.querySelector('.dsh-tl-barrow[data-seq="2"]') as HTMLElement;
    expect(bar.querySelector(".dsh-tl-metrics")?.textContent).toBe("500 ms · 1,200 in / 40 out · $0.0003");
    expect(bar.title).toContain("request #2");
    expect(v.el.querySelector('.dsh-tl-barrow[data-seq="4"] .dsh-tl-metrics')?.textContent).toBe("300 ms");
    v.el.remove();
  });

  it("marks each idle gap cut out of the axis with its length", () => {
    const { v } = mount();
    const marks = [...v.el.querySelectorAll(".dsh-tl-break")] as HTMLElement[];
    expect(marks.length).toBeGreaterThan(0);
    expect(marks.reduce((n, m) => n + Number(m.dataset.idleMs), 0)).toBe(2 * 58_760);
    expect(marks[0].textContent).toMatch(/idle$/);
    expect(marks[0].querySelector("svg.dsh-icon-break")).not.toBeNull();
    expect(Number(v.el.dataset.span)).toBe(3720); // 3.7 s of work, not 2 min
    expect(v.el.querySelector(".dsh-tl-axislabel")?.textContent).toContain("2 idle gaps over 1 s cut");
    v.el.remove();
  });

  it("zooms with + − 0, moves between bars with the arrows and selects with Enter", async () => {
    const { v, onSelect, key, settle } = mount();
    const span = Number(v.el.dataset.to);
    key("+");
    expect(Number(v.el.dataset.zoom)).toBeCloseTo(2);
    key("+");
    expect(Number(v.el.dataset.zoom)).toBeCloseTo(4);
    key("-");
    expect(Number(v.el.dataset.zoom)).toBeCloseTo(2);
    key("0");
    expect([Number(v.el.dataset.from), Number(v.el.dataset.to)]).toEqual([0, span]);
    key("ArrowRight");
    await settle();
    key("ArrowRight");
    await settle();
    expect(v.el.querySelector(".dsh-tl-active")?.getAttribute("data-seq")).toBe("4");
    expect(v.el.getAttribute("aria-activedescendant")).toBe(v.el.querySelector(".dsh-tl-active")?.id);
    key("ArrowLeft");
    await settle();
    key("Enter");
    expect(onSelect).toHaveBeenLastCalledWith(2);
    // zoomed in, moving to a bar off screen brings it into view
    for (let i = 0; i < 6; i++) key("+");
    key("End");
    await settle();
    const last = v.el.querySelector(".dsh-tl-active") as HTMLElement;
    expect(last.dataset.seq).toBe("24");
    expect(last.querySelector(".dsh-tl-bar")).not.toBeNull();
    v.el.remove();
  });
});

describe("compare's open-in-inspector links", () => {
  it("puts one button per side on the first divergence, asking for that side's divergent event", () => {
    const side = (seq: number) => ({ seq, model: "script:auto", messages: 3, last: "", responseSeq: seq + 1, response: "x" });
    const data: CompareData = { a: { sessionId: "s_a", events: 30 }, b: { sessionId: "s_b", events: 28 }, agreeing: 1,
      rows: [{ turn: 1, step: 1, state: "same", a: side(5), b: side(5) }, { turn: 2, step: 1, state: "first", a: side(20), b: side(19) }],
      divergence: { what: "request", turn: 2, step: 1, a: { seq: 18, requestSeq: 20 }, b: { seq: 17, requestSeq: 19 }, messageIndex: 5, diff: [] } };
    const root = document.createElement("div");
    const onOpen = vi.fn();
    const first = renderCompareInto(root, data, onOpen)!;
    const buttons = [...root.querySelectorAll(".dsh-cmp-open button")] as HTMLButtonElement[];
    expect(buttons.every((b) => first.contains(b))).toBe(true);
    expect(buttons.map((b) => b.textContent)).toEqual(["open #18 in inspector", "open #17 in inspector"]);
    buttons[1].click();
    expect(onOpen).toHaveBeenCalledWith("b", 17);
    renderCompareInto(root, data);
    expect(root.querySelector(".dsh-cmp-open")).toBeNull();
  });
});
