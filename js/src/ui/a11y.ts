// Keyboard and focus for the widgets: keys typed inside stay inside (JupyterLab's notebook
// shortcuts never see them), arrow keys rove between stages / tabs / rows, Space and Enter
// activate, and focus survives the re-renders that replace the DOM.
//
// How JupyterLab 4 dispatches shortcuts: the Lumino Application listens for `keydown` on
// `document` (bubble phase, `bubblingKeydown: true`) and calls CommandRegistry.processKeydownEvent,
// which matches each key binding's CSS selector against the target and its ancestors; the walk
// stops at an element carrying `data-lm-suppress-shortcuts`. The notebook's command-mode bindings
// (a, b, d d, arrows, Shift+Enter …) are selectors on `.jp-Notebook…`, an ancestor of the widget,
// so the attribute alone already hides them. We also stop the key events' propagation at the
// widget root (after the target's own handlers ran), so no other document listener acts on them.

const KEY_EVENTS = ["keydown", "keypress", "keyup"] as const;

/** Keep keyboard events inside `root`; typing in its inputs and textareas keeps working. */
export function isolateKeys(root: HTMLElement): () => void {
  root.setAttribute("data-lm-suppress-shortcuts", "true");
  const stop = (e: Event) => e.stopPropagation();
  for (const t of KEY_EVENTS) root.addEventListener(t, stop);
  return () => { for (const t of KEY_EVENTS) root.removeEventListener(t, stop); };
}

/** The key a focusable element is found again by after a re-render. */
export function focusKeyOf(el: Element): string | null {
  const explicit = el.getAttribute("data-fkey");
  if (explicit) return explicit;
  const cls = [...el.classList].filter((c) => c.startsWith("dsh-") && !/-(on|sel|current|flash|focus)$/.test(c)).sort().join(".");
  if (!cls) return null;
  const data = ["data-stage", "data-view", "data-detail", "data-seq", "data-call-id", "data-phase"]
    .map((a) => (el.hasAttribute(a) ? `[${a}="${el.getAttribute(a)}"]` : "")).join("");
  return `${el.tagName.toLowerCase()}.${cls}${data}`;
}

function findByKey(root: HTMLElement, key: string): HTMLElement | null {
  const direct = [...root.querySelectorAll<HTMLElement>("[data-fkey]")].find((e) => e.getAttribute("data-fkey") === key);
  if (direct) return direct;
  return [...root.querySelectorAll<HTMLElement>("button, [tabindex], input, select, textarea, a[href]")].find((e) => focusKeyOf(e) === key) ?? null;
}

/** Wrap a render function: whatever had focus inside `root` has it again afterwards (the element
 *  with the same focus key), without scrolling the page. */
export function keepFocus(root: HTMLElement, render: () => void): () => void {
  return () => {
    const active = root.ownerDocument.activeElement;
    const key = active && active !== root && root.contains(active) ? focusKeyOf(active) : null;
    render();
    if (!key || (active && active.isConnected && root.contains(active))) return;
    findByKey(root, key)?.focus({ preventScroll: true });
  };
}

export type Orientation = "horizontal" | "vertical" | "both";

/** The index an arrow / Home / End key moves to among `count` items, or null for other keys. */
export function roveIndex(key: string, index: number, count: number, orientation: Orientation = "both"): number | null {
  const prev = orientation === "horizontal" ? ["ArrowLeft"] : orientation === "vertical" ? ["ArrowUp"] : ["ArrowLeft", "ArrowUp"];
  const next = orientation === "horizontal" ? ["ArrowRight"] : orientation === "vertical" ? ["ArrowDown"] : ["ArrowRight", "ArrowDown"];
  if (count <= 0) return null;
  if (prev.includes(key)) return Math.max(0, index - 1);
  if (next.includes(key)) return Math.min(count - 1, index + 1);
  if (key === "Home") return 0;
  if (key === "End") return count - 1;
  return null;
}

/** Arrow keys move focus among the items of `container` matching `selector` (roving tabindex:
 *  the focused item gets tabindex 0, the others -1). Returns the listener's remover. */
export function roving(container: HTMLElement, selector: string, orientation: Orientation = "both"): () => void {
  const onKey = (e: KeyboardEvent) => {
    const items = [...container.querySelectorAll<HTMLElement>(selector)];
    const i = items.indexOf(e.target as HTMLElement);
    if (i < 0) return;
    const j = roveIndex(e.key, i, items.length, orientation);
    if (j === null) return;
    e.preventDefault();
    for (const it of items) it.tabIndex = -1;
    items[j].tabIndex = 0;
    items[j].focus();
  };
  container.addEventListener("keydown", onKey);
  return () => container.removeEventListener("keydown", onKey);
}

/** Space and Enter activate `el` (a non-button element with role="button" / "option" / "tab"). */
export function onActivate(el: HTMLElement, fn: () => void): void {
  el.addEventListener("keydown", (e) => {
    if (e.target !== el) return;
    if (e.key === "Enter" || e.key === " " || e.key === "Spacebar") { e.preventDefault(); fn(); }
  });
}

let ids = 0;
/** A document-unique id for aria-controls / aria-labelledby. */
export function uid(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}
