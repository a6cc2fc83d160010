// CompareWidget (`%dsh compare A B`): two sessions side by side, aligned by turn and step, the
// first divergence highlighted, scrolled into view, and the message diff of the requests there.
import { countOf } from "./model/counts";
import { compareStatus, diffLineKind, type CompareData, type CompareSide } from "./model/compare";
import type { WidgetModel } from "./transport";
import { h, replace } from "./ui/dom";
import { observePane } from "./ui/narrow";
import type { CommFromView } from "./wire.gen";

/** What an "open in inspector" button asks for: side "a" or "b", at that seq. */
export type OpenAt = (side: "a" | "b", seq: number) => void;

function openButton(side: "a" | "b", seq: number | null, onOpen: OpenAt | undefined): HTMLElement | null {
  if (seq === null || !onOpen) return null;
  const b = h("button", { class: `dsh-btn dsh-cmp-open-${side}`, type: "button", "data-side": side, "data-seq": seq,
    title: `open session ${side.toUpperCase()} in an inspector with event #${seq} selected` }, `open #${seq} in inspector`);
  b.addEventListener("click", () => onOpen(side, seq));
  return h("div", { class: "dsh-cmp-open" }, b);
}

function sideCell(side: CompareSide | null, name: string, open: HTMLElement | null = null, turn?: number): HTMLElement {
  if (!side) return h("td", { class: "dsh-cmp-cell dsh-cmp-none" }, `${name} has no such step`, open);
  // a fork's turns after its fork point are numbered as its origin's: say its own number
  const own = side.turn !== undefined && turn !== undefined && side.turn !== turn ? ` · ${name}'s turn ${side.turn}` : "";
  return h("td", { class: "dsh-cmp-cell" },
    h("div", { class: "dsh-cmp-req" }, `request #${side.seq} · ${countOf(side.messages, "message")}${own}`),
    side.last ? h("div", { class: "dsh-cmp-last", title: "the request's last message" }, side.last) : null,
    h("div", { class: "dsh-cmp-resp", title: side.responseSeq !== null ? `assistant/message #${side.responseSeq}` : "no answer was committed" }, `→ ${side.response}`), open);
}

function diffBlock(lines: string[]): HTMLElement {
  return h("pre", { class: "dsh-cmp-diff", "aria-label": "message diff of the two requests" },
    ...lines.map((line) => h("span", { class: `dsh-cmp-line dsh-cmp-${diffLineKind(line)}` }, `${line}\n`)));
}

/** `onOpen`: the first divergence gets an "open in inspector" button per side (the divergent event). */
export function renderCompareInto(root: HTMLElement, data: CompareData, onOpen?: OpenAt): HTMLElement | null {
  const d = data.divergence;
  const table = h("table", { class: "dsh-cmp-table" },
    h("thead", null, h("tr", null, h("th", { class: "dsh-cmp-key" }, "turn · step"),
      h("th", null, `A · ${data.a.sessionId}`), h("th", null, `B · ${data.b.sessionId}`))));
  const body = h("tbody");
  let first: HTMLElement | null = null;
  for (const r of data.rows) {
    const tr = h("tr", { class: `dsh-cmp-row dsh-cmp-${r.state}`, "data-state": r.state, "data-turn": r.turn, "data-step": r.step, "aria-current": r.state === "first" ? "true" : null },
      h("td", { class: "dsh-cmp-key" }, `${r.turn} · ${r.step}`, r.state === "first" ? h("div", { class: "dsh-cmp-flag" }, "first divergence") : r.state === "same" ? h("div", { class: "dsh-cmp-same" }, "same") : null),
      sideCell(r.a, "A", r.state === "first" && d ? openButton("a", d.a.seq ?? d.a.requestSeq, onOpen) : null, r.turn),
      sideCell(r.b, "B", r.state === "first" && d ? openButton("b", d.b.seq ?? d.b.requestSeq, onOpen) : null, r.turn));
    body.append(tr);
    if (r.state === "first" && d) {
      first = tr;
      body.append(h("tr", { class: "dsh-cmp-diffrow" }, h("td", { colspan: 3 }, diffBlock(d.diff))));
    }
  }
  table.append(body);
  const scroller = h("div", { class: "dsh-cmp-scroll", tabindex: 0, "aria-label": "the aligned steps" }, table);
  replace(root,
    h("div", { class: "dsh-header" }, h("span", { class: "dsh-title" }, "Compare sessions"),
      h("span", { class: "dsh-sub" }, `A ${data.a.sessionId} (${countOf(data.a.events, "event")}) · B ${data.b.sessionId} (${countOf(data.b.events, "event")})`)),
    h("div", { class: `dsh-cmp-status${d ? " dsh-cmp-status-div" : ""}`, role: "status" }, compareStatus(data)),
    scroller);
  return first;
}

/** Scroll the first divergence to the top of the table's viewport once it is laid out. */
function scrollToFirst(root: HTMLElement, row: HTMLElement, tries = 60): void {
  const scroller = root.querySelector(".dsh-cmp-scroll") as HTMLElement | null;
  if (!scroller) return;
  if (!row.isConnected || scroller.clientHeight === 0) {
    if (tries > 0) requestAnimationFrame(() => scrollToFirst(root, row, tries - 1));
    return;
  }
  const head = (scroller.querySelector("thead") as HTMLElement | null)?.offsetHeight ?? 0;
  scroller.scrollTop += row.getBoundingClientRect().top - scroller.getBoundingClientRect().top - head - 4;
}

export function renderCompare(model: WidgetModel, el: HTMLElement): () => void {
  const root = h("div", { class: "dsh-root dsh-compare" });
  el.append(root);
  const draw = () => {
    const first = renderCompareInto(root, (model.get("data") ?? { a: {}, b: {}, rows: [] }) as CompareData,
      (side, seq) => model.send({ kind: "open-inspector", side, seq } satisfies CommFromView));
    if (first && typeof requestAnimationFrame === "function") requestAnimationFrame(() => scrollToFirst(root, first));
  };
  draw();
  model.on("change:data", draw);
  const unPane = observePane(root);
  return () => { model.off("change:data", draw); unPane(); root.remove(); };
}
