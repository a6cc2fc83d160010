// Which event cards the payload view shows for a tool call at a log position, and the note
// beneath the history view (seed 000's captions).
import type { SessionEvent } from "../types";
import type { StageNo, ToolCallTrace } from "./stages";

/** One event card of the payload view (ui/payload-view.ts draws it). */
export interface PayloadCard {
  seq?: number; type: string; event?: SessionEvent; committed: boolean; placeholder?: string;
  /** JSON levels open (default: 2 committed, 1 not); the card the stage is about opens all. */
  open?: number;
  /** The card the selected stage is about. */
  current?: boolean;
  /** The tool's output as plain text (tool/result), shown wrapped beneath the JSON. */
  plain?: string;
}

export function payloadCards(events: readonly SessionEvent[], call: ToolCallTrace | undefined, seq: number, extraSeq: number | null = null): PayloadCard[] {
  const card = (type: string, s: number | undefined, placeholder: string): PayloadCard => {
    const ev = s !== undefined ? events[s] : undefined;
    return { seq: s, type, event: ev, committed: ev !== undefined && s !== undefined && s <= seq, placeholder };
  };
  const cards: PayloadCard[] = [];
  if (!call) {
    cards.push(card("assistant/message", undefined, "The model has not settled a response with a tool call yet."));
    cards.push(card("tool/call", undefined, "Registered by execute_tool_calls() when the call starts."));
    cards.push(card("tool/result", undefined, "Committed by commit_ready(), citing the tool/call seq."));
  } else {
    cards.push(card("assistant/message", call.assistantSeq, "No assistant/message carries this call (synthetic)."));
    cards.push(card("tool/call", call.callSeq, "Appended by execute_tool_calls() when the call starts."));
    if (call.policySeq !== undefined) cards.push(card("approval/decided", call.policySeq, ""));
    for (const s of call.approvalSeqs) cards.push(card(events[s]?.type ?? "approval", s, ""));
    cards.push(card("tool/result", call.resultSeq, `Will carry the tool message and sourceEventSeqs: [${call.callSeq ?? "tool/call seq"}].`));
    cards.push(card("request/frozen", call.frozenSeq, "The next request: prepare_request() freezes messageSeqs including the result."));
  }
  if (extraSeq !== null && !cards.some((c) => c.seq === extraSeq) && events[extraSeq]) {
    cards.unshift({ seq: extraSeq, type: events[extraSeq].type, event: events[extraSeq], committed: extraSeq <= seq || seq < 0 });
  }
  return cards;
}

export function stageNote(call: ToolCallTrace | undefined, stage: StageNo | 0): string {
  const c = call?.callId ?? "the call";
  switch (stage) {
    case 0: return "No model response yet; the next request has not been built.";
    case 1: return `The assistant's call ${c} has settled; the tool has not run yet.`;
    case 2: return "tool/call is committed; waiting for the runtime to return.";
    case 3: return "The tool is in the runtime; its result is not committed yet.";
    case 4: return "The result is in the session; the next step has not derived messages yet.";
    case 5: return "Messages derived (including the result); the next request is not frozen yet.";
    case 6: return "Messages and request frozen; handed to adapter.stream().";
  }
}
