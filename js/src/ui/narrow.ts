// Narrow panes (a projector at 1024×768 with the file browser open, a notebook split beside a
// terminal): the widgets are often 500–900 px wide. Three helpers keep them readable there:
// - softBreaks: a value's text with <wbr> break opportunities after path and name separators, so
//   "src/README.md" wraps as "src/" + "README.md", never "REA" + "DME.md" (the CSS turns off
//   breaking inside a word; a single piece too long for its box is ellipsized, the full value in
//   the element's title). <wbr> adds no text: textContent and what a screen reader reads are the
//   value itself.
// - observePane: the widget root's width class (data-pane="narrow" | "medium" | "wide") from a
//   ResizeObserver on the root, not a media query: a pane is narrow whatever the viewport is.
// - keepTabInView: the selected tab of a horizontally scrolling tab row scrolled into view
//   (inside the row only; the notebook never scrolls).

export type PaneWidth = "narrow" | "medium" | "wide";

/** Width classes of a widget root, in CSS px of its content box. */
export const PANE_NARROW = 640;
export const PANE_WIDE = 900;

export const paneWidth = (px: number): PaneWidth => (px < PANE_NARROW ? "narrow" : px < PANE_WIDE ? "medium" : "wide");

// a break is allowed after these (a path "/" "\\", a name "_" "-", a list "," ";" ":", "=")
const AFTER = /[/\\_\-,;:=]/;
const SEP = /[/\\_\-.,;:=·]/;
const SPACE = /\s/;
const LETTER = /[A-Za-z]/;

/** The pieces of `text` with a break opportunity between them: after a separator ("src/" +
 *  "README.md", "derive_" + "messages") and before a dot between letters ("adapter" + ".stream"),
 *  never at either end of a word, nor after a separator that starts one (" /tmp", " -x"). */
export function breakPoints(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i < text.length; i++) {
    const a = text[i - 1], b = text[i];
    if ((SEP.test(b) && b !== ".") || SPACE.test(b) || SPACE.test(a)) continue;
    const after = AFTER.test(a) && i - 1 > start && !SPACE.test(text[i - 2]) && !SEP.test(text[i - 2]);
    const beforeDot = b === "." && LETTER.test(a) && LETTER.test(text[i + 1] ?? "");
    if (!after && !beforeDot) continue;
    out.push(text.slice(start, i));
    start = i;
  }
  out.push(text.slice(start));
  return out;
}

/** `text` as nodes: the pieces with a <wbr> between them (textContent unchanged). */
export function softBreaks(text: string): (string | HTMLElement)[] {
  const pieces = breakPoints(text);
  const nodes: (string | HTMLElement)[] = [];
  pieces.forEach((p, i) => {
    if (i) nodes.push(document.createElement("wbr"));
    nodes.push(p);
  });
  return nodes;
}

/** Keep `root.dataset.pane` up to date with its width; returns the disconnect. */
export function observePane(root: HTMLElement): () => void {
  const set = (w: number) => {
    if (w <= 0) return; // not laid out (a hidden output): keep the last class
    const p = paneWidth(w);
    if (root.dataset.pane !== p) root.dataset.pane = p;
  };
  if (typeof ResizeObserver !== "function") return () => undefined;
  const ro = new ResizeObserver((entries) => { for (const e of entries) set(e.contentRect.width); });
  ro.observe(root);
  return () => ro.disconnect();
}

/** Scroll the tab row so its selected tab is fully visible (the row's own scrollLeft only), and
 *  mark the edges where tabs are cut (data-clipped="start end"; the CSS fades them as a cue). */
export function keepTabInView(tablist: HTMLElement): void {
  tablist.onscroll = () => markClipped(tablist);
  const tab = tablist.querySelector<HTMLElement>('[role="tab"][aria-selected="true"]');
  if (tab && tablist.scrollWidth > tablist.clientWidth + 1) {
    const row = tablist.getBoundingClientRect();
    const r = tab.getBoundingClientRect();
    if (r.left < row.left) tablist.scrollLeft -= row.left - r.left + 32;
    else if (r.right > row.right) tablist.scrollLeft += r.right - row.right + 32;
  }
  markClipped(tablist);
}

function markClipped(t: HTMLElement): void {
  const over = t.scrollWidth > t.clientWidth + 1;
  const edges = over ? [t.scrollLeft > 1 ? "start" : "", t.scrollLeft + t.clientWidth < t.scrollWidth - 1 ? "end" : ""].filter(Boolean).join(" ") : "";
  if ((t.dataset.clipped ?? "") !== edges) t.dataset.clipped = edges;
}
