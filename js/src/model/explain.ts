// The words beneath the diagram and in the responsibilities view, filled with real values.
import type { SessionEvent } from "../types";
import { resolveMessageSeqs } from "./diff";
import { decisionText } from "./mode";
import { byStage, type Stage, type StageNo, type ToolCallTrace } from "./stages";

export type Role = Stage["roles"][number];
export const ROLES: { role: Role; label: string }[] = [
  { role: "model", label: "Model" },
  { role: "agent", label: "Agent" },
  { role: "tools", label: "Tool runtime" },
  { role: "session", label: "Session" },
];

/** Who is responsible at each stage (DESIGN §5): the stage table's roles. */
export const STAGE_ROLES: Record<StageNo, readonly Role[]> = byStage((s) => s.roles);

export function short(s: string, n = 80): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function frozenSummary(events: readonly SessionEvent[], seq: number | undefined, count?: number | null): { n: number | null; where: string } {
  if (seq === undefined) return { n: 0, where: "" };
  const ev = events[seq];
  const n = count !== undefined ? count : resolveMessageSeqs(events, seq).length;
  const where = ev?.type === "request/frozen" ? `${ev.provider || "?"}:${ev.model || "?"}` : ev ? "?:?" : "";
  return { n, where };
}

/** The explanation of `stage` for tool call `t`, with the session's real values. */
/** " Its arguments were edited while paused (debug/edit #11)[: the tool runs with {…}]; the model
 *  asked for {…}." — empty for a call nobody edited. */
export function argumentsEdited(t: ToolCallTrace, withValue: boolean): string {
  const edits = t.argumentEdits ?? [];
  if (!edits.length) return "";
  const now = withValue ? `: the tool runs with ${short(t.arguments, 120)}` : "";
  return ` Its arguments were edited while paused (${edits.map((s) => `debug/edit #${s}`).join(", ")})${now}; the model asked for ${short(t.modelArguments ?? "?", 120)}.`;
}

/** The `debug/edit`s of request `frozenSeq` made while paused at 06: they follow it before the
 *  model's answer (a short scan, not of the whole log). */
export function requestEdits(events: readonly SessionEvent[], frozenSeq: number | undefined): number[] {
  const out: number[] = [];
  if (frozenSeq === undefined) return out;
  for (let i = frozenSeq + 1; i < events.length && i <= frozenSeq + 64; i++) {
    const e = events[i];
    if (!e || e.type === "assistant/message" || e.type === "request/frozen") break;
    if (e.type === "debug/edit" && e.target === "request" && (e.sourceEventSeqs ?? []).includes(frozenSeq)) out.push(e.seq);
  }
  return out;
}

/** " Decided: allow by mode · mode plan (approval/decided #12)." — what decided the call, in which
 *  permission mode (issue 36); empty before its decision or in a log without one. */
export function decided(t: ToolCallTrace, events: readonly SessionEvent[]): string {
  const ev = t.decisionSeq !== undefined ? events[t.decisionSeq] : undefined;
  return ev && ev.type === "approval/decided" ? ` Decided: ${decisionText(ev)} (approval/decided #${ev.seq}).` : "";
}

/** `frozenCount`: the number of messages request `t.frozenSeq` froze when it is known from
 *  elsewhere (a window of a long session: the kernel's messages page; null while it comes) —
 *  else it is resolved from `events`. */
export function explainStage(t: ToolCallTrace, stage: StageNo, events: readonly SessionEvent[], frozenCount?: number | null): { title: string; text: string } {
  const args = short(t.arguments, 120);
  switch (stage) {
    case 1:
      return {
        title: "The model states its intent",
        text: t.assistantSeq !== undefined
          ? `assistant/message #${t.assistantSeq} is recorded with a ${t.name} tool-call block: ${t.callId} · ${args}. ${t.callId} names this call; nothing has been executed and no result exists yet.`
          : `No assistant/message carries ${t.callId} (a synthetic call); the scheduler registered it directly.`,
      };
    case 2:
      return {
        title: "The call is registered first",
        text: t.callSeq !== undefined
          ? `execute_tool_calls() appended tool/call #${t.callSeq} (${t.name}, ${t.callId}) when the call started and keeps that seq: the result will cite it.${argumentsEdited(t, true)}`
          : `execute_tool_calls() has not appended the tool/call for ${t.callId} yet.`,
      };
    case 3:
      return {
        title: "The tool runtime takes over",
        text: `The tool runtime runs ${t.name}(${args}) through prepare → policy → ${t.approvalSeqs.length ? "approval → " : ""}execute → result handling. Progress goes to the view only, never into the history.${decided(t, events)}${argumentsEdited(t, false)}`,
      };
    case 4:
      return {
        title: "The return value becomes a session event",
        text: t.resultSeq !== undefined
          ? `tool/result #${t.resultSeq} carries the tool message for ${t.callId}${t.isError ? ` (an error${t.errorCode ? `: ${t.errorCode}` : ""})` : ""} and sourceEventSeqs: [${t.callSeq ?? "?"}] pointing at the tool/call. commit_ready() commits results in the model's call order; the Session commits to memory (flushing to disk is separate).`
          : `The result of ${t.callId} is not committed yet.`,
      };
    case 5: {
      const n = t.frozenSeq === undefined ? undefined : frozenCount !== undefined ? frozenCount : resolveMessageSeqs(events, t.frozenSeq).length;
      return {
        title: "The next step reads the session surface",
        text: `The next step's prepare_request() calls session.derive_messages()${t.deriveSeq !== undefined ? ` (step/start #${t.deriveSeq})` : ""} and gets a history${n !== undefined && n !== null ? ` of ${n} messages` : ""} that includes tool/result #${t.resultSeq ?? "?"}.`,
      };
    }
    case 6: {
      const f = frozenSummary(events, t.frozenSeq, frozenCount);
      const edits = requestEdits(events, t.frozenSeq);
      const edited = edits.length ? ` Its messages were edited while paused (${edits.map((e) => `debug/edit #${e}`).join(", ")}): the model got the edited messages, which the edit holds, not exactly these.` : "";
      return {
        title: "Freeze the request, then hand it to the model",
        text: t.frozenSeq !== undefined
          ? `request/frozen #${t.frozenSeq} froze ${f.n ?? "its"} messages (messageSeqs include #${t.resultSeq}) and handed them to adapter.stream() on ${f.where}. This time the model gets ${t.name}'s result.${edited}`
          : "The next request has not been frozen yet.",
      };
    }
  }
}

/** One line per role: what it does at this stage, with real function names. */
export function roleLines(t: ToolCallTrace | undefined, stage: StageNo | 0, events: readonly SessionEvent[] = []): Record<Role, string> {
  const c = t?.callId ?? "c1";
  const n = t?.name ?? "read";
  const ev = t?.decisionSeq !== undefined ? events[t.decisionSeq] : undefined;
  const decidedBy = ev && ev.type === "approval/decided" ? ` The policy decided: ${decisionText(ev)}.` : "";
  return {
    model: stage === 6 ? `adapter.stream() sends it the frozen request, now holding ${n}'s result for ${c}.`
      : `Produces the intent: the ${n} call ${c} with its arguments in assistant/message. It reads no files itself.`,
    agent: stage === 5 || stage === 6 ? `prepare_request() derives and freezes the next messages for the next step.`
      : `execute_tool_calls() schedules this step's tools; tool/call is logged when ${c} starts.`,
    tools: (stage === 3 ? `Runs ${n}: prepare → policy → execute → result handling (progress only to the view).`
      : `Executes ${n} under the execution mode and barriers; commit_ready() then commits in call order.`) + decidedBy,
    session: stage === 4 ? `Commits tool/result citing the tool/call seq; commit (memory) and flush (disk) are separate.`
      : `Stores events and projects the surface: derive_messages() gives the history with the result.`,
  };
}
