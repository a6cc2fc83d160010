// The presenter layout for a 1024×768 projector (issue 37 item 2). The widget used to be 1,489–
// 1,669 px tall in a 647 px notebook viewport: the current stage below the fold, the playback row
// and the views always below it, and stepping never brought the stage into view. In presenter
// mode (widget.css, "presenter layout"):
// - the narration, the predict panel and the six stages come first (in a narrow pane the stages
//   are a row of compact cards, the current one with its title and value);
// - the playback bar sticks to the bottom of the notebook's viewport (the output area's own
//   overflow is let go for it), so back / play / next are always reachable;
// - the three views, the legend and the header's figures are on demand: collapsed until the
//   bar's "Views" toggle opens them;
// - while the widget holds the focus, each new stage (or question) is brought into view inside
//   the notebook's scroller — the least scroll that shows the narration down to the current
//   stage above the sticky bar; when both do not fit, the current stage wins.
import { h } from "./dom";
import { iconLabel } from "./icons";
import { viewList } from "./views";

export interface ViewsToggle { el: HTMLButtonElement; set(open: boolean): void }

/** The "Views" toggle of the playback bar (shown in presenter mode only). */
export function createViewsToggle(controls: string, toggle: () => void): ViewsToggle {
  const el = h("button", { class: "dsh-btn dsh-views-toggle", type: "button", "aria-expanded": "false", "aria-controls": controls,
    title: `show the views (${viewList()})` }) as HTMLButtonElement;
  iconLabel(el, "expand", "Views", true);
  el.addEventListener("click", toggle);
  return {
    el,
    set(open) {
      el.setAttribute("aria-expanded", String(open));
      iconLabel(el, open ? "up" : "expand", "Views", true);
      el.title = open ? "hide the views" : `show the views (${viewList()})`;
    },
  };
}

/** The nearest ancestor that scrolls vertically (JupyterLab's `.jp-WindowedPanel-outer`), else
 *  the document's scroller. */
export function scrollerOf(el: HTMLElement): HTMLElement | null {
  for (let a = el.parentElement; a; a = a.parentElement) {
    const oy = getComputedStyle(a).overflowY;
    if ((oy === "auto" || oy === "scroll") && a.scrollHeight > a.clientHeight + 1) return a;
  }
  return el.ownerDocument.scrollingElement as HTMLElement | null;
}

/** The part of `scroller` a reader sees, in viewport coordinates. */
export function visibleBox(scroller: HTMLElement): { top: number; bottom: number } {
  const win = scroller.ownerDocument.defaultView;
  const vh = win?.innerHeight ?? Number.POSITIVE_INFINITY;
  if (scroller === scroller.ownerDocument.scrollingElement) return { top: 0, bottom: vh };
  const r = scroller.getBoundingClientRect();
  return { top: Math.max(0, r.top), bottom: Math.min(vh, r.bottom) };
}

/** Scroll the widget's scroller the least so that `range` (its first element's top down to its
 *  last element's bottom) is visible above the sticky `bar`. When the range is taller than the
 *  view, the least that shows `must` (the current stage and the narration's title, or the open
 *  question); when even that does not fit, its top. Returns the pixels it scrolled (0: none). */
export function bringIntoView(range: [HTMLElement, HTMLElement], must: [HTMLElement, HTMLElement], bar: HTMLElement | null, margin = 8): number {
  const sc = scrollerOf(range[0]);
  if (!sc) return 0;
  const box = visibleBox(sc);
  const low = box.bottom - (bar ? bar.getBoundingClientRect().height : 0);
  const span = (a: HTMLElement, b: HTMLElement) => {
    const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect();
    return { top: Math.min(ra.top, rb.top) - margin, bottom: Math.max(ra.bottom, rb.bottom) + margin, empty: ra.height === 0 && rb.height === 0 };
  };
  const fits = (r: { top: number; bottom: number }) => r.bottom - r.top <= low - box.top;
  const least = (r: { top: number; bottom: number }) => (r.top < box.top ? r.top - box.top : r.bottom > low ? r.bottom - low : 0);
  const all = span(range[0], range[1]);
  if (all.empty) return 0; // not laid out (a hidden output)
  const need = span(must[0], must[1]);
  const delta = fits(all) ? least(all) : fits(need) ? least(need) : need.top - box.top;
  if (Math.abs(delta) < 1) return 0;
  const before = sc.scrollTop;
  sc.scrollTop += delta;
  return sc.scrollTop - before;
}

/** The parts of a presenting loop widget that must be seen while it is driven. */
export interface StageParts { root: HTMLElement; frame: HTMLElement; diagram: HTMLElement; explain: HTMLElement; question: HTMLElement; bar: HTMLElement }

/** Bring the narration and the current stage (or the open question) into view. In a narrow pane
 *  the stages are a row above the narration (widget.css); else the narration comes first. */
export function showStage(p: StageParts): number {
  const cur = p.diagram.querySelector<HTMLElement>('.dsh-stage[aria-current="step"]') ?? p.frame;
  const title = (p.explain.firstElementChild as HTMLElement | null) ?? p.explain;
  const asking = !p.question.hidden;
  const rowFirst = p.root.dataset.pane === "narrow";
  const range: [HTMLElement, HTMLElement] = rowFirst ? [p.frame, asking ? p.question : p.explain] : [p.explain, asking ? p.question : cur];
  const must: [HTMLElement, HTMLElement] = asking ? [p.question, p.question] : rowFirst ? [cur, title] : [title, cur];
  return bringIntoView(range, must, p.bar);
}
