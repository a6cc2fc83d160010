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

/** The history of a window of a long session, paged (data/loop-window.ts): `shown` is a page of
 *  the `total` messages, and `added` (at 06, once known: the kernel's request-diff page) the seqs
 *  the request adds to the one before — which `events`, holding no earlier requests, cannot say. */
export interface PagedHistory { total: number; added?: readonly number[] }

export function historyFocus(events: readonly SessionEvent[], call: ToolCallTrace | undefined, stage: StageNo | 0, shown: readonly number[],
  paged?: PagedHistory): HistoryFocus {
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
  const n = paged ? paged.total : shown.length;
  if (stage === 5) {
    return { current: result, fresh: [], change: `derive_messages: ${n} messages, none new at this stage; the tool message #${call.resultSeq ?? "?"} (committed at 04) is in it` };
  }
  let inRequest: number[];
  if (paged) {
    const fresh = new Set(paged.added ?? []);
    inRequest = shown.filter((s) => fresh.has(s));
  } else {
    const prev = previousFrozen(events, assistant ?? call.callSeq ?? 0);
    const before = new Set(prev !== undefined ? resolveMessageSeqs(events, prev) : []);
    inRequest = shown.filter((s) => !before.has(s));
  }
  const carries = n > shown.length ? `${n} messageSeqs (the newest shown: […, ${shown.slice(-5).join(", ")}])` : `messageSeqs [${shown.join(", ")}]`;
  const fresh = paged && !paged.added ? "…" : inRequest.map((s) => `#${s}`).join(", ") || "none";
  return { current: result, fresh: [], inRequest, change: `request #${call.frozenSeq ?? "?"} carries ${carries}; in this request and not in the previous one: ${fresh}` };
}
