// Stage 03 from the log (DESIGN §5): the tool runtime's phases re-derived from the durable events
// of one call (tool/call → approval/asked → approval/decided → tool/result) when no live
// tool-runtime frames exist for it (a replay, a page reload, a follow that began after the call).
import { isCode, type ErrorCode, type SessionEvent, type ToolPhase, type ToolState } from "../types";
import { decisionText } from "./mode";
import type { ToolCallTrace } from "./stages";

/** Codes the runtime produces while preparing (parse/validate): the body never started. */
const PREPARE_CODES: ReadonlySet<string> = new Set<ErrorCode>(["UNKNOWN_TOOL", "INVALID_JSON", "INVALID_ARGS"]);
/** Codes of calls the runtime never dispatched. */
const NOT_DISPATCHED: ReadonlySet<string> = new Set<string>([...new Set<ErrorCode>(["ABORTED_BEFORE_DISPATCH", "DENIED"]), ...PREPARE_CODES]);

export const DERIVED_NOTE = "re-derived from tool/call → tool/result";

/** A phase as stage 03 shows it: a live one (the fold's `ToolPhase`), or one re-derived from the
 *  log, whose status may also be the ask a policy made or a cancelled decision; `seq`: the durable
 *  event it was re-derived from (absent live). */
export interface RuntimePhase extends Omit<ToolPhase, "status"> {
  status: ToolPhase["status"] | "ask" | "cancelled";
  seq?: number;
}
/** What stage 03 shows for one call: the fold's live tool state, or phases re-derived from the
 *  log (`derived`). */
export interface ToolRuntimeState {
  callId: string;
  name: string;
  phases: RuntimePhase[];
  waiting: boolean;
  derived?: { callSeq: number; resultSeq?: number; elapsedMs?: number };
}

/** Whether the runtime reported this call through live frames (progress alone does not count). */
export function hasLiveFrames(rt: ToolRuntimeState | ToolState | undefined): rt is ToolRuntimeState {
  return Boolean(rt && rt.phases.some((p) => p.phase !== "progress"));
}

/** The phases of `t` as the log proves them, each tagged with the seq of the event that proves it.
 *  Only events at or before `through` count (a playback position reveals them one by one). */
export function deriveRuntime(events: readonly SessionEvent[], t: ToolCallTrace, through = Number.POSITIVE_INFINITY): ToolRuntimeState | undefined {
  if (t.callSeq === undefined || t.callSeq > through) return undefined;
  const call = events[t.callSeq];
  const phases: RuntimePhase[] = [];
  const add = (ev: SessionEvent, phase: ToolPhase["phase"], status: RuntimePhase["status"], detail?: string | null) =>
    phases.push({ phase, status, time: ev.time, seq: ev.seq, detail: detail ?? null });
  add(call, "prepare", "start");
  // decided without asking (issue 36: every call's decision is logged, with its mode and decider)
  const policy = t.policySeq !== undefined && t.policySeq <= through ? events[t.policySeq] : undefined;
  if (policy && policy.type === "approval/decided") {
    add(policy, "prepare", "done");
    add(policy, "policy", policy.decision, decisionText(policy));
  }
  let asked = false;
  let decision: RuntimePhase["status"] | undefined;
  for (const s of t.approvalSeqs) {
    const ev = events[s];
    if (!ev || s > through) continue;
    if (ev.type === "approval/asked") {
      asked = true;
      add(ev, "prepare", "done");
      add(ev, "policy", "ask", [ev.reason, ev.mode ? `mode ${ev.mode}` : "", ev.decider ? `asked by ${ev.decider}` : ""].filter(Boolean).join(" · ") || undefined);
      add(ev, "approval", "waiting", ev.approver ?? undefined);
    } else if (ev.type === "approval/decided") {
      decision = ev.decision;
      add(ev, "approval", decision, ev.decider ? decisionText(ev) : ev.by ? `by ${String(ev.by)}` : undefined);
    }
  }
  const res = t.resultSeq !== undefined && t.resultSeq <= through ? events[t.resultSeq] : undefined;
  if (res) {
    const code = res.type === "tool/result" ? res.error?.code : undefined;
    const isError = Boolean(res.type === "tool/result" && res.message.isError) || code !== undefined;
    const status = isError ? "error" : "done";
    if (code !== undefined && PREPARE_CODES.has(code)) add(res, "prepare", "error", code);
    else if (!asked && !policy && !isCode(code, "ABORTED_BEFORE_DISPATCH")) {
      add(res, "prepare", "done");
      // no ask was logged: the policy decided on its own (allowed unless the result says DENIED)
      add(res, "policy", isCode(code, "DENIED") ? "deny" : "allow");
    }
    const allowed = (decision === undefined || decision === "allow") && (!policy || policy.type !== "approval/decided" || policy.decision === "allow");
    const dispatched = allowed && (code === undefined || !NOT_DISPATCHED.has(code));
    if (dispatched) add(res, "execute", status, code);
    add(res, "result", status, code);
  }
  return {
    callId: t.callId,
    name: t.name,
    phases,
    waiting: asked && decision === undefined && !res,
    derived: {
      callSeq: t.callSeq,
      resultSeq: res ? res.seq : undefined,
      elapsedMs: res ? Math.max(0, res.time - call.time) : undefined,
    },
  };
}

/** What stage 03 shows for `t`: the live frames when the runtime reported any, else the log's. */
export function runtimeView(live: ToolRuntimeState | ToolState | undefined, events: readonly SessionEvent[], t: ToolCallTrace | undefined, through: number): ToolRuntimeState | undefined {
  if (hasLiveFrames(live)) return live;
  if (!t) return live as ToolRuntimeState | undefined;
  return deriveRuntime(events, t, through) ?? (live as ToolRuntimeState | undefined);
}
