// A time axis that shows work (issue 38 item 3): the spans a session (or a turn) was busy with
// keep their length; an idle gap between them longer than `idle` ms — a person reading, a run
// waiting overnight — is cut out of the axis, and a break mark where it was says how long it was.
// Gaps up to `idle` stay to scale (the bookkeeping between a tool's result and the next request).
// The Timeline's and the Waterfall's axes are both made by `cutAxis` (the kernel gives the busy
// spans of a whole session: pages/stats.py busy_spans).

export const IDLE_MS = 1000;

/** Real time [t0, t1] drawn from axis position a0 on. */
export interface AxisSegment { t0: number; t1: number; a0: number }
/** A cut: at axis position `at`, `ms` of idle time (from real time `t0`) left out. */
export interface AxisBreak { at: number; ms: number; t0: number }
export interface CutAxis { span: number; segments: AxisSegment[]; breaks: AxisBreak[]; idleMs: number }

/** The axis of the `busy` spans ([start, end] epoch ms, in order; they may overlap). */
export function cutAxis(busy: readonly (readonly [number, number])[], idle = IDLE_MS): CutAxis {
  const segments: AxisSegment[] = [];
  const breaks: AxisBreak[] = [];
  let cur: AxisSegment | null = null;
  let idleMs = 0;
  for (const [a, b] of busy) {
    const end = Math.max(a, b);
    if (cur && a - cur.t1 <= idle) { if (end > cur.t1) cur.t1 = end; continue; }
    if (cur) {
      const at: number = cur.a0 + (cur.t1 - cur.t0);
      const gap = Math.max(0, a - cur.t1);
      breaks.push({ at, ms: gap, t0: cur.t1 });
      idleMs += gap;
      cur = { t0: a, t1: end, a0: at };
    } else cur = { t0: a, t1: end, a0: 0 };
    segments.push(cur);
  }
  const last = segments[segments.length - 1];
  return { span: last ? Math.max(1, last.a0 + (last.t1 - last.t0)) : 1, segments, breaks, idleMs };
}

/** Where real time `t` lands on the axis (a time inside a cut lands on its break). */
export function toAxis(axis: CutAxis, t: number): number {
  const s = axis.segments;
  if (!s.length || t <= s[0].t0) return 0;
  let lo = 0, hi = s.length - 1;
  while (lo < hi) { // the last segment starting at or before t
    const mid = (lo + hi + 1) >> 1;
    if (s[mid].t0 <= t) lo = mid; else hi = mid - 1;
  }
  const seg = s[lo];
  return seg.a0 + Math.min(t, seg.t1) - seg.t0;
}

/** The breaks in [from, to] of the axis, those closer than `minGap` axis ms merged into one
 *  (a mark for each: where, how many gaps, how long they were in all). */
export function breaksIn(axis: CutAxis, from: number, to: number, minGap: number): { at: number; count: number; ms: number }[] {
  const b = axis.breaks;
  let lo = 0, hi = b.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (b[mid].at < from) lo = mid + 1; else hi = mid; }
  const out: { at: number; count: number; ms: number }[] = [];
  for (let i = lo; i < b.length && b[i].at <= to; i++) {
    const last = out[out.length - 1];
    if (last && b[i].at - last.at < minGap) { last.count += 1; last.ms += b[i].ms; } else out.push({ at: b[i].at, count: 1, ms: b[i].ms });
  }
  return out;
}
