// The six stages of seed 000, derived from the log (DESIGN §5) for every tool call of a session.
// The stages themselves are the generated STAGE_TABLE (declared once in Python, in the module
// dsh_notebook.wire.stages): a stage's number, key, title, short label, pause point, roles and
// edit target come from there.
import type { SessionEvent } from "../types";
import { STAGE_TABLE } from "../wire.gen";
import { requestIncludes } from "./diff";

/** One row of the stage table. */
export type Stage = (typeof STAGE_TABLE)[number];
export type StageNo = Stage["no"];
export const STAGES: readonly Stage[] = STAGE_TABLE;
/** A value for every stage, computed from its row. */
export function byStage<T>(f: (s: Stage) => T): Record<StageNo, T> {
  const out = {} as Record<StageNo, T>;
  for (const s of STAGES) out[s.no] = f(s);
  return out;
}

/** One tool call followed through the loop: the seqs that mark its stages. */
export interface ToolCallTrace {
  index: number;
  callId: string;
  name: string;
  arguments: string;
  turn?: number;
  step?: number;
  assistantSeq?: number;
  callSeq?: number;
  /** approval/asked and the approval/decided that answered it: a person was asked. */
  approvalSeqs: number[];
  /** the approval/decided of a call decided without asking (by the mode, a rule or a grant). */
  policySeq?: number;
  /** the last approval/decided of the call (with asking or without): its `mode` and `decider`. */
  decisionSeq?: number;
  resultSeq?: number;
  isError?: boolean;
  errorCode?: string;
  /** step/start of the step whose prepare_request derives the history with the result. */
  deriveSeq?: number;
  /** request/frozen whose messageSeqs first include the result. */
  frozenSeq?: number;
  /** `debug/edit` seqs that changed the arguments while paused at 02–03 (`arguments` is then the
   *  edited value the tool ran with, `modelArguments` what the model asked for). */
  argumentEdits?: number[];
  modelArguments?: string;
}

/** Incremental tracer: feed it the events in order (again and again as more arrive). */
export class CallTracer {
  readonly traces: ToolCallTrace[] = [];
  private readonly byCallSeq = new Map<number, ToolCallTrace>();
  private readonly openByCallId = new Map<string, ToolCallTrace[]>();
  private awaitingDerive: ToolCallTrace[] = [];
  private awaitingFrozen: ToolCallTrace[] = [];
  private through = -1;

  /** `events` indexed by seq: a window of a session (data/loop-window.ts) holds nothing below its
   *  first seq, and what it does not hold is skipped. */
  update(events: readonly SessionEvent[]): ToolCallTrace[] {
    for (let i = this.through + 1; i < events.length; i++) {
      const ev = events[i];
      if (ev) this.fold(events, ev);
    }
    this.through = events.length - 1;
    return this.traces;
  }

  private open(callId: string): ToolCallTrace | undefined {
    return this.openByCallId.get(callId)?.find((t) => t.callSeq === undefined);
  }

  private fold(events: readonly SessionEvent[], ev: SessionEvent): void {
    switch (ev.type) {
      case "assistant/message": {
        const m = ev.message;
        if (!m || m.role !== "assistant") return;
        const op = ev.surfaceOp;
        for (const b of m.content ?? []) {
          if (b.type !== "tool-call") continue;
          // the debugger's copy of a message with edited arguments replaces it: the same call
          const same = op?.op === "replace" ? this.openByCallId.get(b.id)?.find((x) =>
            x.assistantSeq !== undefined && x.assistantSeq >= op.startSeq && x.assistantSeq <= op.endSeq) : undefined;
          if (same) { same.arguments = b.arguments; continue; }
          const t: ToolCallTrace = { index: this.traces.length, callId: b.id, name: b.name, arguments: b.arguments, turn: ev.turn, step: ev.step, assistantSeq: ev.seq, approvalSeqs: [] };
          this.traces.push(t);
          const list = this.openByCallId.get(b.id) ?? [];
          list.push(t);
          this.openByCallId.set(b.id, list);
        }
        return;
      }
      case "tool/call": {
        const id = String(ev.callId ?? "");
        let t = this.open(id);
        if (!t) { // a synthetic call (aborted before dispatch) or a log without the assistant event
          t = { index: this.traces.length, callId: id, name: String(ev.name ?? ""), arguments: String(ev.arguments ?? ""), turn: ev.turn, step: ev.step, approvalSeqs: [] };
          this.traces.push(t);
          this.openByCallId.set(id, [...(this.openByCallId.get(id) ?? []), t]);
        }
        t.callSeq = ev.seq;
        this.byCallSeq.set(ev.seq, t);
        return;
      }
      case "approval/asked":
      case "approval/decided": {
        const list = this.openByCallId.get(String(ev.callId ?? "")) ?? [];
        const t = [...list].reverse().find((x) => x.callSeq !== undefined && x.resultSeq === undefined);
        if (!t) return;
        if (ev.type === "approval/decided") t.decisionSeq = ev.seq;
        // a decision with no ask before it is the policy's (mode, rule, grant): not an approval step
        const asked = t.approvalSeqs.length > 0 && events[t.approvalSeqs[t.approvalSeqs.length - 1]]?.type === "approval/asked";
        if (ev.type === "approval/decided" && !asked) { if (t.policySeq === undefined) t.policySeq = ev.seq; return; }
        t.approvalSeqs.push(ev.seq);
        return;
      }
      case "tool/result": {
        const src = ev.sourceEventSeqs?.[0];
        let t = src !== undefined ? this.byCallSeq.get(src) : undefined;
        const m = ev.message;
        if (!t && m && m.role === "tool") t = (this.openByCallId.get(m.toolCallId) ?? []).find((x) => x.resultSeq === undefined);
        if (!t) return;
        t.resultSeq = ev.seq;
        t.isError = m?.role === "tool" ? Boolean(m.isError) : undefined;
        const err = ev.error as { code?: string } | undefined;
        t.errorCode = err?.code;
        this.awaitingDerive.push(t);
        this.awaitingFrozen.push(t);
        return;
      }
      case "debug/edit": {
        if (ev.target !== "arguments" || !ev.callId || typeof ev.after !== "string") return;
        const t = [...(this.openByCallId.get(ev.callId) ?? [])].reverse().find((x) => x.resultSeq === undefined);
        if (!t) return;
        if (t.modelArguments === undefined) t.modelArguments = typeof ev.before === "string" ? ev.before : t.arguments;
        t.arguments = ev.after;
        t.argumentEdits = [...(t.argumentEdits ?? []), ev.seq];
        return;
      }
      case "step/start": {
        for (const t of this.awaitingDerive) t.deriveSeq = ev.seq;
        this.awaitingDerive = [];
        return;
      }
      case "turn/start": {
        // a new turn: results of the previous turn will be derived by its first step
        return;
      }
      case "request/frozen": {
        if (this.awaitingFrozen.length === 0) return;
        this.awaitingFrozen = this.awaitingFrozen.filter((t) => {
          if (t.resultSeq !== undefined && requestIncludes(events, ev.seq, t.resultSeq)) {
            t.frozenSeq = ev.seq;
            if (t.deriveSeq === undefined || t.deriveSeq > ev.seq) t.deriveSeq = ev.seq;
            return false;
          }
          return true;
        });
        this.awaitingDerive = this.awaitingDerive.filter((t) => t.frozenSeq === undefined);
        return;
      }
      default:
        return;
    }
  }
}

export function traceToolCalls(events: readonly SessionEvent[]): ToolCallTrace[] {
  return new CallTracer().update(events);
}

/** The seq that marks `stage` of `t`, if that stage has happened. */
export function stageSeq(t: ToolCallTrace, stage: StageNo): number | undefined {
  switch (stage) {
    case 1: return t.assistantSeq ?? t.callSeq;
    case 2: return t.callSeq;
    case 3: return t.approvalSeqs.length ? t.approvalSeqs[t.approvalSeqs.length - 1] : t.policySeq ?? t.callSeq;
    case 4: return t.resultSeq;
    case 5: return t.deriveSeq;
    case 6: return t.frozenSeq;
  }
}

/** The stage a tool call is in once the log holds events through `seq` (0 = not yet settled).
 *  `running` says the tool runtime reported phases for it (live frames). */
export function stageAt(t: ToolCallTrace, seq: number, running = false): StageNo | 0 {
  if (t.frozenSeq !== undefined && t.frozenSeq <= seq) return 6;
  if (t.deriveSeq !== undefined && t.deriveSeq <= seq) return 5;
  if (t.resultSeq !== undefined && t.resultSeq <= seq) return 4;
  if (t.callSeq !== undefined && t.callSeq <= seq) {
    const approvals = t.approvalSeqs.some((s) => s <= seq);
    return running || approvals || t.callSeq < seq ? 3 : 2;
  }
  if (t.assistantSeq !== undefined && t.assistantSeq <= seq) return 1;
  return 0;
}

/** One position of playback: a tool call at a stage, with the log position and the recorded time. */
export interface PlaybackStep { call: number; stage: StageNo; seq: number; time: number }

export function playbackSteps(traces: readonly ToolCallTrace[], events: readonly SessionEvent[]): PlaybackStep[] {
  const out: PlaybackStep[] = [];
  for (const t of traces) {
    for (const s of STAGES) {
      const seq = stageSeq(t, s.no);
      if (seq === undefined) continue;
      if (s.no === 3 && t.approvalSeqs.length > 1) {
        // stage 03 with an approval: one step per approval event, so the asked → decided
        // phases re-derived from the log appear one after the other
        for (const a of t.approvalSeqs.slice(0, -1)) out.push({ call: t.index, stage: 3, seq: a, time: events[a]?.time ?? 0 });
      }
      let time = events[seq]?.time ?? 0;
      if (s.no === 3 && t.resultSeq !== undefined && t.approvalSeqs.length === 0) {
        time = Math.round((time + (events[t.resultSeq]?.time ?? time)) / 2); // the tool ran between call and result
      }
      out.push({ call: t.index, stage: s.no, seq, time });
    }
  }
  return out;
}

/** `playbackSteps`, recomputed only when the log or the traced calls grew (a render of a long
 *  session does not rebuild tens of thousands of steps it already has). */
export function memoPlaybackSteps(): (traces: readonly ToolCallTrace[], events: readonly SessionEvent[]) => PlaybackStep[] {
  let events = -1, calls = -1, steps: PlaybackStep[] = [];
  return (t, e) => {
    if (e.length !== events || t.length !== calls) { steps = playbackSteps(t, e); events = e.length; calls = t.length; }
    return steps;
  };
}
