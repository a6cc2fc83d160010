// The event-payload view: cards for the events of the current tool call, committed or not yet,
// expandable JSON, sourceEventSeqs as links that jump to the cited event.
import { h, replace } from "./dom";
import { focusCards, QUIET_KEYS } from "../model/card-focus";
import { payloadCards, type PayloadCard } from "../model/cards";
import { askedCards, maskEvent } from "../model/predict-mask";
import { jsonTree } from "./json";
import type { View, ViewHost } from "./view";

export type { PayloadCard };

/** The event-payload view as a row of the views table: the shown call's events as cards, the
 *  ones a question asks about held back; a link to a seq opens this view on that event's card. */
export function payloadView(host: ViewHost): View {
  let flash: number | null = null;
  const jump = (seq: number) => { flash = seq; host.open(); };
  return {
    render(panel, v) {
      const cards = askedCards(focusCards(payloadCards(v.events, v.call, v.seq, flash), v.stage), v.question)
        .map((c) => ({ ...c, event: maskEvent(c.event, v.mask) }));
      // only what cites it by the shown position (a later tool/result is the answer to a question)
      replace(panel, renderPayloads(cards, (seq) => v.citing(seq).filter((c) => c <= v.seq), jump,
        "Expandable payloads of this call's events, as committed to the log; links jump to the cited event."));
      if (flash === null) return;
      const target = panel.querySelector(`.dsh-card[data-seq="${flash}"]`);
      target?.classList.add("dsh-flash");
      target?.scrollIntoView?.({ block: "nearest" });
      flash = null;
    },
  };
}

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
