// derive_messages in the browser: the surface fold (append / replace) projected to messages,
// at any seq; and the learner's projection (user / assistant / tool, wrappers behind a toggle).
import { messageOf, type Message, type SessionEvent } from "../types";

export const SURFACE_TYPES = new Set(["user/message", "system/message", "assistant/message", "tool/result"]);

export interface DerivedMessage { seq: number; message: Message }

function contributes(ev: SessionEvent): Message | null {
  const m = messageOf(ev);
  if (!m) return null;
  if ((m.role === "assistant" || m.role === "system") && (!m.content || m.content.length === 0)) return null;
  return m;
}

/** The model-visible history after folding events with seq <= `throughSeq` (all when omitted). */
export function deriveMessages(events: readonly SessionEvent[], throughSeq = Infinity): DerivedMessage[] {
  let nodes: number[] = [];
  const bySeq = new Map<number, SessionEvent>();
  for (const ev of events) {
    if (ev.seq > throughSeq) break;
    if (!SURFACE_TYPES.has(ev.type)) continue;
    bySeq.set(ev.seq, ev);
    const op = "surfaceOp" in ev ? ev.surfaceOp : undefined;
    if (op && op.op === "replace") {
      const i = nodes.indexOf(op.startSeq);
      const j = nodes.indexOf(op.endSeq);
      if (i >= 0 && j >= i) nodes = [...nodes.slice(0, i), ev.seq, ...nodes.slice(j + 1)];
      else nodes.push(ev.seq); // a log the Session would have refused: show it rather than hide it
    } else {
      nodes.push(ev.seq);
    }
  }
  const out: DerivedMessage[] = [];
  for (const s of nodes) {
    const ev = bySeq.get(s);
    const m = ev && contributes(ev);
    if (m) out.push({ seq: s, message: m });
  }
  return out;
}

/** A wrapper is what the learner's view hides by default: system prompts and plugin
 *  (runtime-context) user messages. */
export function isWrapper(m: Message): boolean {
  return m.role === "system" || (m.role === "user" && m.source?.kind === "plugin");
}

export function visibleHistory(msgs: readonly DerivedMessage[], showWrappers: boolean): DerivedMessage[] {
  return showWrappers ? [...msgs] : msgs.filter((d) => !isWrapper(d.message));
}

export function messageText(m: Message): string {
  return (m.content ?? []).filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
}

/** The messages of a frozen request: the surface events its `messageSeqs` name, in order. */
export function messagesOfSeqs(events: readonly SessionEvent[], seqs: readonly number[]): DerivedMessage[] {
  const out: DerivedMessage[] = [];
  for (const s of seqs) {
    const ev = events[s];
    const m = ev && ev.seq === s ? contributes(ev) : null;
    if (m) out.push({ seq: s, message: m });
  }
  return out;
}
