// Where a live run is (issue 37 item 6). A new turn's model request is the present: while the
// model works on it the diagram shows that turn's stage 01 waiting, not the last call of an
// earlier turn (a lesson on the local model showed the previous turn's "03 · Tool executes" for
// 14 s while the model worked on the new one). And the widget says what the text clients say:
// "waiting for the model · N s" once an attempt has waited half a second for its first chunk
// (dsh_notebook/host/waiting.py: the same grace, the same words, whole seconds).
import type { SessionEvent, StreamingAttempt } from "../types";
import type { ToolCallTrace } from "./stages";

/** The latest turn of the log: its number, its turn/start, whether a tool call of it is traced
 *  yet, and whether it ended. */
export interface TurnNow { turn: number; seq: number; hasCall: boolean; ended: boolean }

/** Folds turn/start and turn/end as the log grows (a render does not rescan it). */
export class TurnTracker {
  private through = -1;
  private start: { turn: number; seq: number } | null = null;
  private ended = false;

  update(events: readonly SessionEvent[]): void {
    if (events.length - 1 < this.through) { this.through = -1; this.start = null; this.ended = false; } // a new log
    for (let i = this.through + 1; i < events.length; i++) {
      const ev = events[i];
      if (ev?.type === "turn/start") { this.start = { turn: ev.turn, seq: ev.seq }; this.ended = false; }
      else if (ev?.type === "turn/end" && this.start && ev.turn === this.start.turn) this.ended = true;
    }
    this.through = events.length - 1;
  }

  now(traces: readonly ToolCallTrace[]): TurnNow | null {
    if (!this.start) return null;
    const last = traces[traces.length - 1];
    const at = last ? last.assistantSeq ?? last.callSeq ?? -1 : -1;
    return { ...this.start, hasCall: at > this.start.seq, ended: this.ended };
  }
}

/** How long an attempt waits before the widget says so (the text clients' GRACE_S). */
export const WAIT_GRACE_MS = 500;
export const waitingText = (seconds: number): string => `waiting for the model · ${seconds} s`;

/** Times the live attempt from when this view first saw it (as the text clients do): whole
 *  seconds it has waited for its first chunk once past the grace, else null. */
export class WaitClock {
  private id: string | null = null;
  private since = 0;

  seconds(attempt: StreamingAttempt | null, now: number): number | null {
    if (!attempt || attempt.chunks !== 0 || attempt.outcome !== null) { this.id = null; return null; }
    if (attempt.attemptId !== this.id) { this.id = attempt.attemptId; this.since = now; }
    const waited = now - this.since;
    return waited >= WAIT_GRACE_MS ? Math.floor(waited / 1000) : null;
  }
  /** An attempt is waiting for its first chunk (the line shows or will, after the grace). */
  get active(): boolean {
    return this.id !== null;
  }
  /** Milliseconds until the line first shows (for a timer), or null when none is due. */
  dueIn(now: number): number | null {
    return this.id === null ? null : Math.max(0, this.since + WAIT_GRACE_MS - now);
  }
}

/** Stage 01's value while a turn has no tool call: waiting (the narration has the full line),
 *  working, or answered in text. */
export function turnValue(t: TurnNow, waited: number | null): string {
  return t.ended ? "text answer, no tool call" : waited !== null ? `waiting · ${waited} s` : `turn ${t.turn} · the model is working`;
}

/** The narration of a turn without a tool call (the request that went to the model, from the log). */
export function turnNarration(t: TurnNow, streaming: boolean, events: readonly SessionEvent[]): { title: string; text: string } {
  let req: number | undefined;
  for (let i = events.length - 1; i > t.seq; i--) if (events[i]?.type === "request/frozen") { req = events[i].seq; break; }
  const sent = req !== undefined ? `request/frozen #${req} went to the model` : "its request is being built";
  if (t.ended) return { title: "The model answered in text", text: `Turn ${t.turn}'s response settled with no tool call: the loop does not run, and the turn ends with the answer.` };
  return {
    title: streaming ? `Turn ${t.turn}: the model is responding` : `Turn ${t.turn}: waiting for the model`,
    text: `Turn ${t.turn} began (turn/start #${t.seq}); ${sent}. ${streaming ? "Its response is arriving; " : "Nothing has come back yet; "}once it settles, a tool call starts the loop at 01 — a text answer ends the turn.`,
  };
}
