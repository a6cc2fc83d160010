// A presenter's remote (issue 23 item 3): PageDown / ArrowRight / Space go to the next stage,
// PageUp / ArrowLeft to the previous one, Home / End to the first / last, L back to live —
// anywhere in the widget. A click on any part of the widget keeps the keyboard focus in it
// (the root, or the focusable thing clicked) and never makes the notebook change its active
// cell; the keys never reach JupyterLab (isolateKeys in ui/a11y.ts stops them at the root).
// JupyterLab's own keydown handlers, checked (4.6): its shortcuts (the notebook's command mode:
// ArrowLeft / ArrowRight / J / K … on `.jp-Notebook.jp-mod-commandMode :focus`) run from a
// bubbling listener on the document and stop at data-lm-suppress-shortcuts; the output area's
// caret watcher (a bubbling keydown on `.jp-OutputArea`, which scrolls the cell into view) and
// the notebook's own listeners are above the root, so the stopped key never reaches them. What is
// left is the browser's default: a clicker key (PageDown, Space, Home, End, the arrows) scrolls
// the notebook's scroller — prevented here whether or not the widget used the key (issue 37).

export type ClickerAction = "next" | "prev" | "first" | "last" | "live";

const KEYS: Record<string, ClickerAction> = {
  PageDown: "next", ArrowRight: "next", " ": "next", Spacebar: "next",
  PageUp: "prev", ArrowLeft: "prev",
  Home: "first", End: "last",
  l: "live", L: "live",
};

interface KeyLike { key: string; target: EventTarget | null; altKey?: boolean; ctrlKey?: boolean; metaKey?: boolean }

/** What a key does, or null where it belongs to what has the focus: typing in a text field,
 *  the scrubber's own arrows, Space on a button or a checkbox, arrows in the tab row, the glossary. */
export function clickerAction(e: KeyLike): ClickerAction | null {
  const action = KEYS[e.key];
  if (!action || e.altKey || e.ctrlKey || e.metaKey) return null;
  const t = e.target as HTMLElement | null;
  if (!t || typeof t.closest !== "function") return action;
  if (t.isContentEditable || t.closest("textarea, select, .dsh-glossary, [contenteditable=''], [contenteditable='true']")) return null;
  if (t.tagName === "INPUT") {
    const type = (t as HTMLInputElement).type;
    if (type !== "checkbox" && type !== "radio") return null; // text, search, range: their keys
    return action === "next" && (e.key === " " || e.key === "Spacebar") ? null : action;
  }
  if (t.closest("[role=tablist]") && e.key !== "PageDown" && e.key !== "PageUp") return null; // tabs rove
  const space = e.key === " " || e.key === "Spacebar";
  if (space && t.closest("button, a[href], summary")) return null; // Space presses the button
  return action;
}

/** Keys whose default action scrolls the notebook's scroller (the nearest one to the focus). */
const SCROLL_KEYS = new Set(["PageDown", "PageUp", " ", "Spacebar", "Home", "End", "ArrowLeft", "ArrowRight"]);

/** Install the remote on `root`; `act` returns false when it did nothing (the key then goes on
 *  to what has the focus, but never scrolls the notebook: issue 37 item 1). Returns the remover. */
export function installClicker(root: HTMLElement, act: (a: ClickerAction) => boolean): () => void {
  if (!root.hasAttribute("tabindex")) root.tabIndex = -1;
  const onKey = (e: KeyboardEvent) => {
    const a = clickerAction(e);
    if (!a) return;
    if (SCROLL_KEYS.has(e.key)) e.preventDefault(); // no notebook scroll on Space / PageDown / Home …
    if (!act(a)) return;
    e.preventDefault();
    e.stopPropagation(); // nor the stage's own Space / arrow handling
  };
  // a click anywhere keeps the focus in the widget; the notebook never hears the press
  // (it would make this cell active and take the focus back: Notebook._evtMouseDown / _evtFocusIn)
  const onClick = (e: MouseEvent) => {
    const doc = root.ownerDocument;
    if (root.contains(doc.activeElement) && doc.activeElement !== doc.body) return;
    const t = e.target as HTMLElement | null;
    const focusable = t?.closest?.<HTMLElement>("button, input, select, textarea, a[href], [tabindex]");
    (focusable && root.contains(focusable) ? focusable : root).focus({ preventScroll: true });
    if (!root.contains(doc.activeElement)) root.focus({ preventScroll: true });
  };
  const stop = (e: Event) => e.stopPropagation();
  root.addEventListener("keydown", onKey, true);
  root.addEventListener("click", onClick);
  root.addEventListener("mousedown", stop);
  root.addEventListener("focusin", stop);
  return () => {
    root.removeEventListener("keydown", onKey, true);
    root.removeEventListener("click", onClick);
    root.removeEventListener("mousedown", stop);
    root.removeEventListener("focusin", stop);
  };
}
