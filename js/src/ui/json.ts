// Expandable JSON with truncation ("show all") and seq links for sourceEventSeqs.
import { countOf, fmtInt } from "../model/counts";
import { h } from "./dom";
import { icon } from "./icons";

export const TRUNCATE_CHARS = 600;

export interface JsonOptions {
  /** Called when a cited seq (in sourceEventSeqs / messageSeqs) is clicked. */
  onSeq?: (seq: number) => void;
  limit?: number;
  /** Keys whose value starts collapsed at any depth (bookkeeping such as the stream timing). */
  collapseKeys?: ReadonlySet<string>;
}

const SEQ_KEYS = new Set(["sourceEventSeqs", "messageSeqs", "baseRequestSeq", "startSeq", "endSeq"]);

function primitive(v: unknown, limit: number): HTMLElement {
  if (typeof v === "string") {
    const full = JSON.stringify(v);
    if (full.length <= limit) return h("span", { class: "dsh-j-str" }, full);
    const span = h("span", { class: "dsh-j-str" }, `${full.slice(0, limit)}…`);
    const more = h("button", { class: "dsh-link dsh-showall", type: "button", title: `${full.length} characters` }, `show all (${full.length} chars)`);
    more.addEventListener("click", (e) => { e.stopPropagation(); span.textContent = full; more.remove(); });
    return h("span", null, span, " ", more);
  }
  const cls = v === null ? "dsh-j-null" : typeof v === "number" ? "dsh-j-num" : "dsh-j-bool";
  return h("span", { class: cls }, JSON.stringify(v));
}

function seqLink(n: number, opts: JsonOptions): HTMLElement {
  const a = h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": n, title: `jump to event #${n}` }, `${n}`);
  a.addEventListener("click", (e) => { e.stopPropagation(); opts.onSeq?.(n); });
  return a;
}

/** Render `value` as an indented tree; containers deeper than `open` levels start collapsed. */
export function jsonTree(value: unknown, opts: JsonOptions = {}, open = 3, key?: string, depth = 0): HTMLElement {
  const limit = opts.limit ?? TRUNCATE_CHARS;
  if (key && SEQ_KEYS.has(key) && opts.onSeq) {
    if (typeof value === "number") return seqLink(value, opts);
    if (Array.isArray(value) && value.every((x) => typeof x === "number")) {
      const nums = value as number[];
      const shown = nums.length > 40 ? nums.slice(0, 40) : nums;
      const parts: (HTMLElement | string)[] = ["["];
      shown.forEach((n, i) => { if (i) parts.push(", "); parts.push(seqLink(n, opts)); });
      if (shown.length < nums.length) parts.push(`, … ${nums.length - shown.length} more`);
      parts.push("]");
      return h("span", { class: "dsh-j-seqs" }, ...parts);
    }
  }
  if (value === null || typeof value !== "object") return primitive(value, limit);
  const isArr = Array.isArray(value);
  const entries: [string, unknown][] = isArr ? (value as unknown[]).map((v, i) => [String(i), v]) : Object.entries(value as object);
  const [o, c] = isArr ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) return h("span", null, o + c);
  const body = h("div", { class: "dsh-j-body" });
  const fill = () => {
    const max = 200;
    entries.slice(0, max).forEach(([k, v], i) => {
      body.append(h("div", { class: "dsh-j-row" },
        isArr ? null : h("span", { class: "dsh-j-key" }, JSON.stringify(k)), isArr ? null : ": ",
        jsonTree(v, opts, open, isArr ? undefined : k, depth + 1), i < entries.length - 1 ? "," : ""));
    });
    if (entries.length > max) body.append(h("div", { class: "dsh-j-row dsh-muted" }, `… ${fmtInt(entries.length - max)} more`));
  };
  const wrap = h("span", { class: "dsh-j" });
  const startOpen = depth < open && !(key !== undefined && opts.collapseKeys?.has(key));
  const toggle = h("button", { class: "dsh-j-toggle", type: "button", "aria-expanded": String(startOpen), "aria-label": `${key ?? "value"}: expand or collapse` }, icon(startOpen ? "expand" : "collapse"));
  const summary = h("span", { class: "dsh-j-summary" }, `${o} ${isArr ? countOf(entries.length, "item") : countOf(entries.length, "key")} ${c}`);
  let filled = false;
  const set = (isOpen: boolean) => {
    if (isOpen && !filled) { fill(); filled = true; }
    body.hidden = !isOpen;
    summary.hidden = isOpen;
    toggle.replaceChildren(icon(isOpen ? "expand" : "collapse"));
    toggle.setAttribute("aria-expanded", String(isOpen));
  };
  toggle.addEventListener("click", (e) => { e.stopPropagation(); set(body.hidden); });
  wrap.append(toggle, h("span", null, o), summary, body, h("span", null, c));
  set(startOpen);
  return wrap;
}
