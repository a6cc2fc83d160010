// The session timeline (issue 24): every turn of the session as a group — its wall time, tokens
// in/out and cost — and inside it one bar per model request attempt and per tool call, on one
// shared time axis. Built from the trajectory fold (model/trajectory.ts), so a bar's tokens and
// cost are exactly what `show --stats` reports (model/pricing.ts is the one cost computation).
// The idle time between turns (a person reading, typing) is cut out of the axis: turn N+1 starts
// GAP_MS after turn N ends, so a session of minutes between turns still shows its work.
import { fmtCost, fmtTokens } from "./stats-tables";
import type { RequestStats, SessionStats, ToolStats, TrajectoryFold } from "./trajectory";

export const GAP_MS = 250;
export interface TimelineBar {
  kind: "request" | "tool";
  seq: number;
  turn: number;
  label: string;
  title: string;
  /** Axis position (ms since the axis start, gaps cut). */
  from: number;
  to: number;
  durationMs: number;
  open: boolean;
  outcome: string;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
}
export interface TimelineGroup {
  turn: number;
  seq: number;
  from: number;
  to: number;
  durationMs: number;
  running: boolean;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  bars: TimelineBar[];
}
export interface SessionTimeline { span: number; groups: TimelineGroup[]; bars: TimelineBar[] }

function requestBar(r: RequestStats, now: number): Omit<TimelineBar, "from" | "to"> & { start: number; end: number } {
  const end = r.endTime ?? Math.max(now, r.sentTime);
  return { kind: "request", seq: r.seq, turn: r.turn, start: r.sentTime, end, durationMs: end - r.sentTime, open: r.endTime === null,
    label: `request #${r.seq}${r.attempt > 1 ? ` · try ${r.attempt}` : ""}`,
    title: `turn ${r.turn} step ${r.step} attempt ${r.attempt} · ${r.provider}:${r.model} · ${r.outcome}${r.error ? ` ${r.error}` : ""}`, outcome: r.outcome,
    inputTokens: r.inputTokens, outputTokens: r.outputTokens, costUsd: r.costUsd };
}

function toolBar(t: ToolStats, now: number): Omit<TimelineBar, "from" | "to"> & { start: number; end: number } {
  const end = t.endTime ?? Math.max(now, t.startTime);
  return { kind: "tool", seq: t.seq, turn: t.turn, start: t.startTime, end, durationMs: end - t.startTime, open: t.endTime === null,
    label: `${t.name} · ${t.callId}`, title: `tool ${t.name} (${t.callId})${t.approval ? ` · approval: ${t.approval}` : ""}${t.error ? ` · ${t.error}` : ""}`,
    outcome: t.error ?? (t.endTime === null ? "open" : "done"), inputTokens: null, outputTokens: null, costUsd: null };
}

/** The whole session: groups in turn order, bars by start time; `now` ends the open bars. */
export function sessionTimeline(fold: TrajectoryFold, stats: SessionStats, now: number): SessionTimeline {
  const groups: TimelineGroup[] = [];
  const all: TimelineBar[] = [];
  let offset = 0;
  for (const t of stats.turns) {
    const raw = [...fold.requests.filter((r) => r.turn === t.turn).map((r) => requestBar(r, now)),
      ...fold.tools.filter((c) => c.turn === t.turn).map((c) => toolBar(c, now))];
    raw.sort((a, b) => a.start - b.start || a.seq - b.seq);
    const end = Math.max(t.endTime ?? (raw.length ? now : t.startTime), t.startTime, ...raw.map((b) => b.end));
    const base = offset - t.startTime;
    const bars = raw.map(({ start, end: e, ...b }) => ({ ...b, from: start + base, to: e + base }));
    groups.push({ turn: t.turn, seq: t.seq, from: offset, to: end + base, durationMs: end - t.startTime, running: t.endTime === null,
      inputTokens: t.inputTokens, outputTokens: t.outputTokens, costUsd: t.costUsd, bars });
    all.push(...bars);
    offset = end + base + GAP_MS;
  }
  return { span: Math.max(1, offset - GAP_MS), groups, bars: all };
}

/** The visible part of the axis: [from, to) in axis ms. */
export interface View { from: number; to: number }
export const MIN_SPAN_MS = 5;

/** Zoom by `factor` (2 = in, 0.5 = out) keeping `anchor` (axis ms) where it is on screen;
 *  never wider than the session nor narrower than MIN_SPAN_MS; clamped inside [0, span]. */
export function zoomView(v: View, span: number, factor: number, anchor = (v.from + v.to) / 2): View {
  const width = Math.min(span, Math.max(MIN_SPAN_MS, (v.to - v.from) / factor));
  const at = (anchor - v.from) / Math.max(1e-9, v.to - v.from);
  return clampView({ from: anchor - at * width, to: anchor - at * width + width }, span);
}

export function clampView(v: View, span: number): View {
  const width = Math.min(span, v.to - v.from);
  const from = Math.max(0, Math.min(span - width, v.from));
  return { from, to: from + width };
}

/** The view moved (no zoom change) so that [a, b] is inside it, when it is not already. */
export function reveal(v: View, span: number, a: number, b: number): View {
  const width = v.to - v.from;
  if (a >= v.from && b <= v.to) return v;
  if (b - a > width || a < v.from) return clampView({ from: a - width * 0.05, to: a - width * 0.05 + width }, span);
  return clampView({ from: b - width * 0.95, to: b + width * 0.05 }, span);
}

/** Where [a, b] lands in percent of the view (clipped; null when outside it). */
export function placeBar(v: View, a: number, b: number): { left: number; width: number } | null {
  const w = v.to - v.from;
  if (b < v.from || a > v.to || w <= 0) return null;
  const l = Math.max(a, v.from), r = Math.min(b, v.to);
  return { left: ((l - v.from) / w) * 100, width: ((r - l) / w) * 100 };
}

/** "1.2k in / 310 out · $0.0012" — a bar's or a turn's tokens and cost, in `show --stats`' units. */
export function tokensText(input: number | null, output: number | null, cost: number | null): string {
  if (input === null && output === null) return "";
  return `${fmtTokens(input)} in / ${fmtTokens(output)} out · ${fmtCost(cost)}`;
}
