// What the widget hides while a predict question is open (issue 37 item 3). A question is asked
// on the step before the one that holds its answer, and every value drawn from the log is bound
// to the shown position, so the sourceEventSeqs and the messages are not on screen yet. The one
// question asked on its own step — the first call's arguments, on its 01 (there is no step before
// it) — needs a mask: the call's arguments, wherever they would show (the narration, the history,
// the assistant/message and tool/call payloads with their stream records, a debugger edit), are
// replaced by HIDDEN until the reveal. The payload card of the event that will hold an answer says
// what it will carry only as "the question above" (its placeholder named the cited seq).
import type { Message, SessionEvent } from "../types";
import type { PayloadCard } from "./cards";
import { notYetText } from "./card-focus";
import type { DerivedMessage } from "./history";
import type { PredictKind, Question } from "./predict";
import type { ToolCallTrace } from "./stages";

/** The text shown where a value the class is guessing would be. */
export const HIDDEN = "‹hidden until the reveal›";

/** The values of one call to hide: its arguments (the only kind asked on its own step). */
export interface PredictMask { callId: string; kind: PredictKind }

/** The mask of an open question, or null when nothing needs hiding. */
export function maskOf(q: Question | null): PredictMask | null {
  return q && q.kind === "arguments" ? { callId: q.callId, kind: q.kind } : null;
}

const hides = (mask: PredictMask | null, callId: string | null | undefined): boolean => Boolean(mask && callId === mask.callId);

/** A trace whose arguments are hidden (the narration and the role lines read them). */
export function maskTrace<T extends ToolCallTrace | undefined>(t: T, mask: PredictMask | null): T {
  if (!t || !hides(mask, t.callId)) return t;
  return { ...t, arguments: HIDDEN, modelArguments: t.modelArguments === undefined ? undefined : HIDDEN };
}

/** A message whose tool-call block of the masked call carries HIDDEN as its arguments. */
export function maskMessage(m: Message, mask: PredictMask | null): Message {
  if (!mask || m.role !== "assistant" || !m.content?.some((b) => b.type === "tool-call" && b.id === mask.callId)) return m;
  return { ...m, content: m.content.map((b) => (b.type === "tool-call" && b.id === mask.callId ? { ...b, arguments: HIDDEN } : b)) };
}

export function maskMessages(list: DerivedMessage[], mask: PredictMask | null): DerivedMessage[] {
  if (!mask) return list;
  return list.map((d) => { const m = maskMessage(d.message, mask); return m === d.message ? d : { ...d, message: m }; });
}

/** An event as its payload card shows it while the mask holds: the assistant/message of the
 *  call (its block, and its stream records, which hold the same arguments in pieces), the
 *  tool/call, a debugger's edit of the arguments. */
export function maskEvent(ev: SessionEvent | undefined, mask: PredictMask | null): SessionEvent | undefined {
  if (!ev || !mask) return ev;
  if (ev.type === "assistant/message") {
    const message = maskMessage(ev.message, mask);
    if (message === ev.message) return ev;
    // a run of deltas names its call only in its first record: every tool-call run is hidden
    const stream = ev.stream?.map((r) => (r.kind === "tool-call" ? { ...r, parts: [HIDDEN], dt: [] } : r));
    return { ...ev, message: message as typeof ev.message, stream };
  }
  if (ev.type === "tool/call" && hides(mask, ev.callId)) return { ...ev, arguments: HIDDEN };
  if (ev.type === "debug/edit" && ev.target === "arguments" && hides(mask, ev.callId)) return { ...ev, before: HIDDEN, after: HIDDEN };
  return ev;
}

/** The event type whose value a question asks about (its card is not committed while asked). */
const ANSWERED_BY: Record<PredictKind, string> = { arguments: "assistant/message", sources: "tool/result", messages: "request/frozen" };

/** The payload cards while question `q` is open: the card that will hold the answer says no more
 *  than that (its usual placeholder told the sourceEventSeqs or what the request will carry). */
export function askedCards(cards: PayloadCard[], q: Question | null): PayloadCard[] {
  if (!q) return cards;
  const type = ANSWERED_BY[q.kind];
  return cards.map((c) => (c.type === type && !c.committed ? { ...c, placeholder: `${notYetText(c.type)}. What it will carry is the question above.` } : c));
}
