// The waterfall of one turn (issue 12): its request attempts (waiting for the response head →
// first token → streaming) and tool calls (running, with the approval wait inside) on one time
// axis, each segment linked to the event that records it. Built from model/trajectory.ts, so the
// bars measure exactly what `show --stats` reports; durations per event for the inspector's list.
import type { SessionEvent } from "../types";
import type { TurnPage } from "../wire.gen";
import type { RequestStats, ToolStats, TrajectoryFold, TurnStats } from "./trajectory";

/** waiting: sent → response head; first-token: head → first delta; streaming: first delta → end;
 *  request: a request without stream timings; run: a tool running; approval: waiting for a person. */
export type SegmentKind = "waiting" | "first-token" | "streaming" | "request" | "run" | "approval";
export interface Segment { kind: SegmentKind; start: number; end: number; seq: number; open: boolean }
export interface Lane {
  kind: "request" | "tool";
  /** The event the lane starts at (request/frozen, tool/call). */
  seq: number;
  label: string;
  /** What hovering the lane's label says (model, outcome). */
  title: string;
  start: number;
  end: number;
  durationMs: number;
  outcome: string;
  segments: Segment[];
}
export interface TurnWaterfall { turn: number; start: number; end: number; lanes: Lane[] }

/** Where each approval of a call was asked / decided (the seqs the approval bar links to). */
export function approvalSeqs(events: readonly SessionEvent[]): Map<string, { asked?: number; decided?: number }> {
  const out = new Map<string, { asked?: number; decided?: number }>();
  for (const ev of events) {
    if (ev.type === "approval/asked") out.set(ev.callId, { asked: ev.seq });
    else if (ev.type === "approval/decided") { const a = out.get(ev.callId) ?? {}; a.decided = ev.seq; out.set(ev.callId, a); }
  }
  return out;
}

function requestLane(r: RequestStats, now: number): Lane {
  const open = r.endTime === null;
  const end = r.endTime ?? Math.max(now, r.sentTime);
  const result = r.resultSeq ?? r.seq;
  const segs: Segment[] = [];
  const head = r.firstByteTime, delta = r.firstDeltaTime;
  if (head === null && delta === null) {
    segs.push({ kind: "request", start: r.sentTime, end, seq: r.seq, open });
  } else {
    const firstMark = head ?? delta ?? end;
    segs.push({ kind: "waiting", start: r.sentTime, end: Math.min(end, Math.max(r.sentTime, firstMark)), seq: r.seq, open: false });
    if (head !== null && delta !== null && delta > head) segs.push({ kind: "first-token", start: head, end: Math.min(end, delta), seq: result, open: false });
    const from = delta ?? head ?? r.sentTime;
    if (end > from) segs.push({ kind: "streaming", start: from, end, seq: result, open });
  }
  return { kind: "request", seq: r.seq, label: `request #${r.seq} · step ${r.step}${r.attempt > 1 ? ` · try ${r.attempt}` : ""}`,
    title: `${r.provider}:${r.model} · ${r.outcome}${r.error ? ` ${r.error}` : ""}`,
    start: r.sentTime, end, durationMs: end - r.sentTime, outcome: r.outcome, segments: segs };
}

function toolLane(t: ToolStats, asked: { asked?: number; decided?: number } | undefined, now: number): Lane {
  const open = t.endTime === null;
  const end = t.endTime ?? Math.max(now, t.startTime);
  const segs: Segment[] = [];
  const runSeq = t.resultSeq ?? t.seq;
  if (t.approvalAskedTime !== null && asked?.asked !== undefined) {
    const a0 = Math.max(t.startTime, t.approvalAskedTime);
    const a1 = Math.min(end, a0 + (t.approvalWaitMs ?? 0));
    if (a0 > t.startTime) segs.push({ kind: "run", start: t.startTime, end: a0, seq: t.seq, open: false });
    segs.push({ kind: "approval", start: a0, end: a1, seq: asked.asked, open: false });
    if (end > a1) segs.push({ kind: "run", start: a1, end, seq: runSeq, open });
  } else if (asked?.asked !== undefined && t.endTime === null) { // waiting for a decision right now
    segs.push({ kind: "approval", start: t.startTime, end, seq: asked.asked, open: true });
  } else {
    segs.push({ kind: "run", start: t.startTime, end, seq: t.seq, open });
  }
  return { kind: "tool", seq: t.seq, label: `${t.name} · ${t.callId}`,
    title: `tool ${t.name} (${t.callId})${t.approval ? ` · approval: ${t.approval}` : ""}${t.error ? ` · ${t.error}` : ""}`, start: t.startTime, end, durationMs: end - t.startTime,
    outcome: t.error ?? (open ? "open" : "done"), segments: segs };
}

/** The waterfall of `turn` (undefined when the fold has no such turn). `now`: where open bars end. */
export function turnWaterfall(fold: TrajectoryFold, events: readonly SessionEvent[], turn: number, now: number): TurnWaterfall | undefined {
  const t = fold.turns.find((x) => x.turn === turn);
  if (!t) return undefined;
  const approvals = approvalSeqs(events.slice(t.seq, t.endSeq === null ? undefined : t.endSeq + 1));
  const lanes: Lane[] = [];
  for (const r of fold.requests) if (r.turn === turn) lanes.push(requestLane(r, now));
  for (const c of fold.tools) if (c.turn === turn) lanes.push(toolLane(c, approvals.get(c.callId), now));
  lanes.sort((a, b) => a.start - b.start || a.seq - b.seq);
  const end = Math.max(t.endTime ?? 0, ...lanes.map((l) => l.end), t.startTime);
  return { turn, start: t.startTime, end, lanes };
}

/** What the inspector's durations column shows per seq: the span an event starts or ends
 *  (request, tool call, approval wait, step, turn). */
export function durationsBySeq(fold: TrajectoryFold, approvals?: Map<string, { asked?: number; decided?: number }>): Map<number, number> {
  const out = new Map<number, number>();
  const put = (seq: number | null, ms: number | null) => { if (seq !== null && ms !== null) out.set(seq, ms); };
  for (const r of fold.requests) { put(r.seq, r.durationMs); put(r.resultSeq, r.durationMs); }
  for (const c of fold.tools) {
    put(c.seq, c.durationMs); put(c.resultSeq, c.durationMs);
    const a = approvals?.get(c.callId);
    if (a) { put(a.asked ?? null, c.approvalWaitMs); put(a.decided ?? null, c.approvalWaitMs); }
  }
  for (const t of fold.turns) {
    put(t.seq, t.endTime === null ? null : t.durationMs); put(t.endSeq, t.durationMs);
    for (const s of t.steps) put(s.seq, s.durationMs);
  }
  return out;
}

/** The waterfall of the turn of a `turn` page (data/pages.ts: the turn's figures, its requests,
 *  tool calls and approvals); `now`: where open bars end. */
export function turnLanes(page: TurnPage, now: number): TurnWaterfall | undefined {
  const t = page.turn as unknown as TurnStats | null;
  if (!t) return undefined;
  const approvals = new Map((page.approvals ?? []).map((a) => [a.callId, { asked: a.asked ?? undefined, decided: a.decided ?? undefined }]));
  const lanes: Lane[] = [];
  for (const r of (page.requests ?? []) as unknown as RequestStats[]) lanes.push(requestLane(r, now));
  for (const c of (page.tools ?? []) as unknown as ToolStats[]) lanes.push(toolLane(c, approvals.get(c.callId), now));
  lanes.sort((a, b) => a.start - b.start || a.seq - b.seq);
  const end = Math.max(t.endTime ?? 0, ...lanes.map((l) => l.end), t.startTime);
  return { turn: t.turn, start: t.startTime, end, lanes };
}

/** What a turn was busy with (its lanes' spans, its start and end): the axis cuts the rest. */
export function laneSpans(w: TurnWaterfall): [number, number][] {
  const spans: [number, number][] = [[w.start, w.start], [w.end, w.end], ...w.lanes.map((l): [number, number] => [l.start, l.end])];
  return spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}
