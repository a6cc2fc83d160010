// A virtualised list: only the rows in view (plus a margin) exist in the DOM, so 10k+ rows scroll smoothly.
import { keepFocus } from "./a11y";
import { h } from "./dom";

export interface VirtualList {
  el: HTMLElement;
  setCount(n: number): void;
  refresh(): void;
  scrollToIndex(i: number): void;
  dispose(): void;
}

export function createVirtualList(rowHeight: number, renderRow: (index: number) => HTMLElement, height = 380): VirtualList {
  const el = h("div", { class: "dsh-vlist", style: `height:${height}px`, tabindex: 0, role: "listbox", "aria-label": "events" });
  const spacer = h("div", { class: "dsh-vlist-spacer", role: "presentation" });
  const layer = h("div", { class: "dsh-vlist-layer", role: "presentation" });
  spacer.append(layer);
  el.append(spacer);
  let count = 0;
  let first = -1;
  let last = -1;
  let raf = 0;

  const draw = (force: boolean) => {
    const view = el.clientHeight || height;
    // never past the last row: after the count shrinks (a filter of a long list scrolled far) the
    // translated layer alone would keep the old scroll range, and draw nothing but blank space
    const maxTop = Math.max(0, count * rowHeight - view);
    if (el.scrollTop > maxTop) el.scrollTop = maxTop;
    const top = Math.min(el.scrollTop, maxTop);
    const from = Math.max(0, Math.floor(top / rowHeight) - 10);
    const to = Math.min(count, Math.ceil((top + view) / rowHeight) + 10);
    if (!force && from === first && to === last) return;
    first = from;
    last = to;
    layer.style.transform = `translateY(${from * rowHeight}px)`;
    const rows: HTMLElement[] = [];
    for (let i = from; i < to; i++) {
      const r = renderRow(i);
      r.style.height = `${rowHeight}px`;
      rows.push(r);
    }
    keepFocus(layer, () => layer.replaceChildren(...rows))(); // a focused row stays focused
  };
  const onScroll = () => {
    if (raf) return;
    raf = requestAnimationFrame(() => { raf = 0; draw(false); });
  };
  el.addEventListener("scroll", onScroll, { passive: true });
  return {
    el,
    setCount(n) {
      count = n;
      spacer.style.height = `${n * rowHeight}px`;
      draw(true);
    },
    refresh() { draw(true); },
    scrollToIndex(i) {
      const view = el.clientHeight || height;
      const y = i * rowHeight;
      if (y < el.scrollTop || y + rowHeight > el.scrollTop + view) el.scrollTop = Math.max(0, y - view / 2);
      draw(true);
    },
    dispose() { el.removeEventListener("scroll", onScroll); if (raf) cancelAnimationFrame(raf); },
  };
}
