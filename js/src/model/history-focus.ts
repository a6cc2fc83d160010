// Which history item the current stage is about, and what is new at that stage (seed 000):
// 01–03 the assistant message holding the tool call; 04 the tool message just committed;
// 05 the derived history (new: what the previous request did not carry); 06 the frozen
// request's messageSeqs (new: the seqs the previous request did not have).
import type { SessionEvent } from "../types";
import { resolveMessageSeqs } from "./diff";
import type { StageNo, ToolCallTrace } from "./stages";

export interface HistoryFocus {
  /** The seq of the item the stage speaks of (aria-current), if it is in the history. */
  current: number | null;
  /** Seqs of the events that happened at this stage (highlighted "new at this stage"). */
  fresh: number[];
  /** At 06: the messages this request carries that the previous request did not ("in this request"). */
  inRequest?: number[];
  /** A short line saying what changed at this stage. */
  change: string;
}

/** The request/frozen that produced the assistant message of `call` (the last one before it). */
export function previousFrozen(events: readonly SessionEvent[], before: number): number | undefined {
  for (let i = Math.min(before, events.length) - 1; i >= 0; i--) if (events[i]?.type === "request/frozen") return events[i].seq;
  return undefined;
}

export function historyFocus(events: readonly SessionEvent[], call: ToolCallTrace | undefined, stage: StageNo | 0, shown: readonly number[]): HistoryFocus {
  if (!call || !stage) return { current: null, fresh: [], change: "" };
  const has = (s: number | undefined): s is number => s !== undefined && shown.includes(s);
  const assistant = call.assistantSeq;
  if (stage <= 3) {
    return { current: has(assistant) ? assistant : null, fresh: stage === 1 && has(assistant) ? [assistant] : [],
      change: stage === 1 ? `new: the assistant message #${assistant ?? "?"} with the tool call ${call.callId}` : `the tool call ${call.callId} is in assistant message #${assistant ?? "?"}; no new message yet` };
  }
  const result = has(call.resultSeq) ? call.resultSeq : null;
  if (stage === 4) {
    return { current: result, fresh: result !== null ? [result] : [], change: call.resultSeq !== undefined ? `new: the tool message #${call.resultSeq} (tool/result, committed)` : "the tool message is not committed yet" };
  }
  const prev = previousFrozen(events, assistant ?? call.callSeq ?? 0);
  const before = new Set(prev !== undefined ? resolveMessageSeqs(events, prev) : []);
  if (stage === 5) {
    return { current: result, fresh: [], change: `derive_messages: ${shown.length} messages, none new at this stage; the tool message #${call.resultSeq ?? "?"} (committed at 04) is in it` };
  }
  const inRequest = shown.filter((s) => !before.has(s));
  return { current: result, fresh: [], inRequest, change: `request #${call.frozenSeq ?? "?"} carries messageSeqs [${shown.join(", ")}]; in this request and not in the previous one: ${inRequest.map((s) => `#${s}`).join(", ") || "none"}` };
}
