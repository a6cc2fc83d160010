// The event-payload view: cards for the events of the current tool call, committed or not yet,
// expandable JSON, sourceEventSeqs as links that jump to the cited event.
import { h } from "./dom";
import { QUIET_KEYS } from "../model/card-focus";
import type { PayloadCard } from "../model/cards";
import { jsonTree } from "./json";

export type { PayloadCard };

export function renderPayloads(cards: PayloadCard[], citing: (seq: number) => number[], jump: (seq: number) => void, caption: string): HTMLElement {
  const list = h("div", { class: "dsh-cards" });
  for (const c of cards) list.append(cardEl(c, citing, jump));
  return h("div", { class: "dsh-view-payloads" }, h("div", { class: "dsh-caption" }, caption), list);
}

export function cardEl(c: PayloadCard, citing: (seq: number) => number[], jump: (seq: number) => void, extra = ""): HTMLElement {
  const badge = c.committed
    ? h("span", { class: "dsh-badge dsh-badge-committed" }, "committed")
    : h("span", { class: "dsh-badge dsh-badge-pending" }, "not yet committed");
  const by = c.seq !== undefined && c.committed ? citing(c.seq) : [];
  const citedBy = by.length
    ? h("div", { class: "dsh-citedby" }, "cited by ", ...by.flatMap((s, i) => {
        const b = h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": s }, `#${s}`);
        b.addEventListener("click", () => jump(s));
        return i ? [", ", b] : [b];
      }))
    : null;
  const body = c.event
    ? h("div", { class: "dsh-card-json" }, jsonTree(c.event, { onSeq: jump, collapseKeys: QUIET_KEYS }, c.open ?? (c.committed ? 2 : 1)))
    : h("div", { class: "dsh-muted dsh-card-placeholder" }, c.placeholder ?? "not recorded yet");
  const plain = c.event && c.plain !== undefined ? plainOutput(c.plain) : null;
  return h("div", {
    class: `dsh-card ${c.committed ? "dsh-card-committed" : "dsh-card-pending"}${c.current ? " dsh-card-current" : ""} ${extra}`,
    "aria-current": c.current ? "true" : null,
    "data-seq": c.seq ?? "",
    "data-type": c.type,
  },
    h("div", { class: "dsh-card-head" },
      h("span", { class: "dsh-card-seq" }, c.seq !== undefined ? String(c.seq) : "–"),
      h("span", { class: "dsh-card-type" }, c.type),
      badge),
    citedBy,
    body,
    plain);
}

/** A tool's output as the tool printed it: wrapped monospace text under a caption. */
export function plainOutput(text: string): HTMLElement {
  return h("div", { class: "dsh-plain" },
    h("div", { class: "dsh-plain-caption" }, "tool output (plain text)"),
    h("pre", { class: "dsh-plain-text" }, text));
}
