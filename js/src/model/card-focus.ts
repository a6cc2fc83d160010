// What the payload view shows at a stage: the card the stage is about opened in full (the
// tool-call block at 01–02, the tool result at 04), the tool output also as plain text, and the
// events that have not happened yet at this stage as placeholders, never their JSON.
import type { SessionEvent } from "../types";
import type { PayloadCard } from "./cards";
import type { StageNo } from "./stages";

/** The stage at which an event of this type enters the log for a tool call. */
export function stageOfType(type: string): StageNo | undefined {
  if (type === "assistant/message") return 1;
  if (type === "tool/call") return 2;
  if (type.startsWith("approval/")) return 3;
  if (type === "tool/result") return 4;
  if (type === "request/frozen") return 6;
  return undefined;
}

/** The card types a stage is about (opened in full, marked current). */
const FOCUS: Record<StageNo, readonly string[]> = {
  1: ["assistant/message"],
  2: ["assistant/message", "tool/call"],
  3: ["tool/call", "approval/asked", "approval/decided"],
  4: ["tool/result"],
  5: ["tool/result"],
  6: ["request/frozen"],
};

/** Bookkeeping that stays collapsed even in a card opened in full: the stream's timing record. */
export const QUIET_KEYS: ReadonlySet<string> = new Set(["stream"]);

/** Deep enough that every level of an event is open (JSON of events is at most ~6 levels). */
export const OPEN_ALL = 12;

/** The text a tool returned, as one string (tool/result's message content). */
export function toolOutputText(ev: SessionEvent | undefined): string | undefined {
  if (!ev || ev.type !== "tool/result") return undefined;
  const parts = ev.message.content.flatMap((b) => ("text" in b && typeof b.text === "string" ? [b.text] : []));
  return parts.length ? parts.join("") : undefined;
}

export function notYetText(type: string, placeholder?: string): string {
  const at = stageOfType(type);
  const when = at ? `not yet — comes at stage 0${at}` : "not yet";
  return placeholder ? `${when}. ${placeholder}` : when;
}

export function focusCards(cards: readonly PayloadCard[], stage: StageNo | 0): PayloadCard[] {
  const focus = stage ? FOCUS[stage] : [];
  return cards.map((c) => {
    if (!c.committed) return { ...c, event: undefined, placeholder: notYetText(c.type, c.placeholder) };
    const current = focus.includes(c.type);
    return { ...c, current, open: current ? OPEN_ALL : c.open, plain: toolOutputText(c.event) };
  });
}
