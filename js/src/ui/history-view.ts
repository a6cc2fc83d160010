// The message-history view: user / assistant / tool (wrappers behind a toggle), with the
// assistant's tool-call block marked as a call, not file content; live text streams in.
import { stageNote } from "../model/cards";
import { fromCell } from "../model/cell";
import { resolveMessageSeqs } from "../model/diff";
import type { DerivedMessage } from "../model/history";
import { messagesOfSeqs, visibleHistory } from "../model/history";
import { historyFocus } from "../model/history-focus";
import { maskMessages } from "../model/predict-mask";
import type { Block, Message, StreamingAttempt } from "../types";
import { fmtInt } from "../model/counts";
import { h, replace } from "./dom";
import { createHistoryFollow } from "./history-follow";
import { TRUNCATE_CHARS } from "./json";
import type { View, ViewHost } from "./view";

const MAX_SHOWN = 150;
/** Messages a page of a long session's history holds (the kernel's messages pages). */
export const HISTORY_PAGE = MAX_SHOWN;

/** Long text is cut with "show all"; a streaming text keeps its tail (the newest part) in view. */
function longText(text: string, cls: string, tail = false): HTMLElement {
  if (text.length <= TRUNCATE_CHARS) return h("div", { class: cls }, text);
  if (tail) return h("div", { class: cls }, `…${text.slice(text.length - TRUNCATE_CHARS)}`);
  const body = h("div", { class: cls }, `${text.slice(0, TRUNCATE_CHARS)}…`);
  const more = h("button", { class: "dsh-link dsh-showall", type: "button" }, `show all (${text.length} chars)`);
  more.addEventListener("click", () => { body.textContent = text; more.remove(); });
  return h("div", null, body, more);
}

function blockEl(b: Block, focusCall?: string, streaming = false): HTMLElement {
  if (b.type === "tool-call") {
    return h("div", { class: `dsh-toolcall ${b.id === focusCall ? "dsh-focus" : ""}`, "data-call-id": b.id },
      h("code", null, `${b.name} · ${b.id} · ${b.arguments}`),
      h("div", { class: "dsh-note" }, "a tool call, not file content"));
  }
  if (b.type === "reasoning") return h("details", { class: "dsh-reasoning" }, h("summary", null, "reasoning"), longText(b.text, "dsh-text"));
  return longText(b.text, "dsh-text", streaming);
}

function messageEl(seq: number | null, m: Message, focusCall?: string, streaming = false, mark?: { current: boolean; fresh: boolean; inRequest?: boolean }): HTMLElement {
  const cell = fromCell(m);
  const label = m.role === "user" && m.source?.kind === "plugin" ? `user (context: ${m.source.plugin ?? "plugin"})` : cell ? `user · ${cell}` : m.role;
  const head = h("div", { class: "dsh-msg-head" }, h("span", { class: "dsh-msg-role" }, label), seq !== null ? h("span", { class: "dsh-seq" }, `#${seq}`) : null);
  const body: HTMLElement[] = [];
  if (m.role === "assistant") for (const b of m.content ?? []) body.push(blockEl(b, focusCall, streaming));
  else if (m.role === "tool") {
    body.push(h("div", { class: "dsh-muted" }, `toolCallId = ${m.toolCallId}${m.isError ? " · error" : ""}`));
    body.push(longText((m.content ?? []).map((b) => b.text).join(""), "dsh-text dsh-pre"));
  } else body.push(longText((m.content ?? []).map((b) => b.text).join(""), "dsh-text"));
  const focus = m.role === "tool" && m.toolCallId === focusCall;
  if (mark?.fresh) head.append(h("span", { class: "dsh-badge dsh-badge-new", title: "this event happened at the stage shown" }, "new at this stage"));
  if (mark?.inRequest) head.append(h("span", { class: "dsh-badge dsh-badge-inreq", title: "this request carries it; the previous request did not" }, "in this request"));
  return h("div", { class: `dsh-msg dsh-msg-${m.role} ${focus ? "dsh-focus" : ""} ${mark?.current ? "dsh-msg-current" : ""} ${mark?.fresh ? "dsh-msg-new" : ""} ${mark?.inRequest ? "dsh-msg-inreq" : ""}`,
    "data-seq": seq ?? "", "aria-current": mark?.current ? "true" : null }, head, ...body);
}

export interface HistoryInput {
  messages: DerivedMessage[];
  /** Messages before these that are not here (a page of the session's messages: the newest). */
  earlier?: number;
  /** Shows the page of messages before these (when `earlier`). */
  onEarlier?: () => void;
  /** Messages after these that are not here (a page back from the newest), and the way to them. */
  later?: number;
  onLater?: () => void;
  /** The page is on its way from the kernel. */
  loading?: boolean;
  showWrappers: boolean;
  focusCall?: string;
  /** The live attempt, when following a running agent. */
  attempt?: StreamingAttempt | null;
  caption: string;
  note: string;
  /** The item the current stage is about, and what is new at this stage (model/history-focus). */
  current?: number | null;
  fresh?: readonly number[];
  /** At 06: the messages new in this request (a mark of their own, not "new at this stage"). */
  inRequest?: readonly number[];
  change?: string;
}

export function renderHistory(d: HistoryInput, onToggle: (show: boolean) => void): HTMLElement {
  const shown = visibleHistory(d.messages, d.showWrappers);
  const hidden = d.messages.length - shown.length;
  const toggle = h("input", { type: "checkbox", class: "dsh-wrappers-toggle" }) as HTMLInputElement;
  toggle.checked = d.showWrappers;
  toggle.addEventListener("change", () => onToggle(toggle.checked));
  const list = h("div", { class: "dsh-history" });
  const start = d.onEarlier ? 0 : Math.max(0, shown.length - MAX_SHOWN); // a paged history shows what it was given
  const earlier = start + (d.earlier ?? 0);
  if (earlier > 0 && d.onEarlier) {
    const more = h("button", { class: "dsh-link dsh-history-earlier", type: "button" }, `… ${fmtInt(earlier)} earlier messages: show ${Math.min(earlier, MAX_SHOWN)} more`);
    more.addEventListener("click", () => d.onEarlier?.());
    list.append(more);
  } else if (earlier > 0) list.append(h("div", { class: "dsh-muted" }, `… ${fmtInt(earlier)} earlier messages (open the inspector for all)`));
  const fresh = new Set(d.fresh ?? []);
  const inReq = new Set(d.inRequest ?? []);
  for (const dm of shown.slice(start)) list.append(messageEl(dm.seq, dm.message, d.focusCall, false, { current: dm.seq === d.current, fresh: fresh.has(dm.seq), inRequest: inReq.has(dm.seq) }));
  const a = d.attempt;
  if (a && a.blocks.length) {
    const blocks = a.blocks.map((b): Block => (b.type === "tool-call" ? { type: "tool-call", id: b.id ?? "?", name: b.name ?? "?", arguments: b.text } : { type: b.type, text: b.text }));
    const el = messageEl(null, { role: "assistant", content: blocks }, d.focusCall, true);
    el.classList.add("dsh-streaming");
    el.querySelector(".dsh-msg-head")?.append(h("span", { class: "dsh-badge dsh-badge-live" }, "streaming…"));
    list.append(el);
  }
  if (d.later && d.onLater) {
    const more = h("button", { class: "dsh-link dsh-history-later", type: "button" }, `… ${fmtInt(d.later)} later messages: show them`);
    more.addEventListener("click", () => d.onLater?.());
    list.append(more);
  }
  if (!shown.length && !(a && a.blocks.length)) list.append(h("div", { class: "dsh-muted" }, d.loading ? "Reading the messages…" : "No messages yet."));
  if (d.loading) list.setAttribute("aria-busy", "true");
  return h("div", { class: "dsh-view-history" },
    h("div", { class: "dsh-caption" }, d.caption,
      h("label", { class: "dsh-toggle" }, toggle, ` show system & context wrappers${hidden ? ` (${hidden} hidden)` : ""}`)),
    d.change ? h("div", { class: "dsh-history-change", role: "status" }, d.change) : null,
    list,
    h("div", { class: "dsh-view-note" }, d.note));
}

/** The message-history view as a row of the views table: at 06 the messages the request froze,
 *  before it what derive_messages() gives at the shown position; the wrappers toggle and the
 *  scroll box's place are its own. */
export function historyView(host: ViewHost): View {
  let showWrappers = false;
  const follow = createHistoryFollow();
  return {
    render(panel, v) {
      const p = v.history;
      const frozen = !p && v.stage === 6 && v.call?.frozenSeq !== undefined ? resolveMessageSeqs(v.events, v.call.frozenSeq) : null;
      const msgs = maskMessages(p ? p.messages : frozen ? messagesOfSeqs(v.events, frozen) : v.derived, v.mask);
      const focus = historyFocus(v.events, v.call, v.stage, msgs.map((m) => m.seq), p ? p.paged ?? { total: msgs.length } : undefined);
      follow.before(panel);
      replace(panel, renderHistory({
        current: focus.current, fresh: focus.fresh, inRequest: focus.inRequest, change: focus.change,
        messages: msgs, showWrappers, focusCall: v.call?.callId, attempt: v.attempt,
        ...(p ? { earlier: p.earlier, onEarlier: p.onEarlier ?? (() => undefined), later: p.later, onLater: p.onLater, loading: p.loading } : {}),
        caption: v.stage === 6 ? `The frozen request #${v.call?.frozenSeq}: its messageSeqs.` : "Only user / assistant / tool messages; system prompt and runtime-context wrappers are hidden.",
        note: stageNote(v.call, v.stage),
      }, (show) => { showWrappers = show; host.schedule(); }));
      follow.after(panel, `${v.call?.callId ?? ""}:${v.stage}:${focus.current ?? ""}`);
    },
    leave: () => follow.reset(),
  };
}
