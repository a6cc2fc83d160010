// Focus stays in the widget after any of its own controls (issue 37 item 1). A presenter clicks
// "Present", "Continue ▶", a class-vote button, "Reveal" or A+ once, then drives the lesson with
// a clicker (PageDown / PageUp / arrows / Space). The focus must not fall to the page body on the
// way — there a clicker key scrolls the notebook instead of stepping. It falls when the focused
// control is removed (a panel rebuilt), moved (a header redrawn), disabled (A+ at the largest
// size) or hidden; a MutationObserver on the widget catches each of these and puts the focus
// back on a sensible element inside:
//   1. the same control, if it is still there and usable (a header redrawn around it);
//   2. the control that replaced it (the same focus key: ui/a11y.ts);
//   3. the preferred control of its group (`data-focus-group` on the group, `data-focus-first`
//      on the control: "Continue ▶" after "Reveal", A− when A+ reaches its end);
//   4. the widget's home (the loop widget: the current stage card), else the widget root.
// In presenter mode (`pointerHome`), a control clicked with the pointer (not a text field) hands
// the focus to the home afterwards, unless the click put it in a text field (the predict guess): a clicker's
// Space then steps instead of pressing the button clicked last. Keyboard use keeps steps 1–3.
import { focusKeyOf } from "./a11y";

export interface FocusKeeper {
  /** The widget holds the focus (a press or a focus inside it, not yet one outside). */
  readonly owned: boolean;
  /** Put the focus back now if it was lost (after a change made outside a render). */
  check(): void;
  dispose(): void;
}

const FOCUSABLE = "button, input, select, textarea, a[href], summary, [tabindex]";
/** Controls whose keys are their own: a click on them keeps the focus where it is. */
const TYPING = "textarea, select, input:not([type=checkbox]):not([type=radio]):not([type=button]), [contenteditable=''], [contenteditable='true']";

/** Focusable now: in the document, enabled, rendered, not inside a hidden subtree. */
export function usable(el: Element | null | undefined): el is HTMLElement {
  if (!el || !(el as HTMLElement).isConnected || (el as HTMLButtonElement).disabled) return false;
  if (el.closest("[hidden], [inert]")) return false;
  // display: none anywhere above (a collapsed view); a page without layout (jsdom) cannot tell
  const check = (el as HTMLElement & { checkVisibility?: () => boolean }).checkVisibility;
  if (typeof check === "function" && !check.call(el)) return false;
  return el.matches(FOCUSABLE) && (el as HTMLElement).tabIndex >= -1;
}

function firstUsable(scope: Element): HTMLElement | null {
  const preferred = [...scope.querySelectorAll("[data-focus-first]")].find(usable);
  return preferred ?? [...scope.querySelectorAll(FOCUSABLE)].find((e): e is HTMLElement => usable(e) && e.tabIndex >= 0) ?? null;
}

export function keepFocusInside(root: HTMLElement, opts: { home?: () => HTMLElement | null; pointerHome?: () => boolean } = {}): FocusKeeper {
  const doc = root.ownerDocument;
  let owned = false;
  let last: HTMLElement | null = null;
  let lastKey: string | null = null;
  let groups: HTMLElement[] = [];
  let queued = false;

  const home = (): HTMLElement => { const h = opts.home?.(); return usable(h) ? h : root; };
  const findKey = (key: string): HTMLElement | null =>
    [...root.querySelectorAll(FOCUSABLE)].find((e): e is HTMLElement => usable(e) && focusKeyOf(e) === key) ?? null;
  const recover = (): HTMLElement => {
    if (last && root.contains(last) && usable(last)) return last;
    const same = lastKey ? findKey(lastKey) : null;
    if (same) return same;
    for (const g of groups) {
      if (!g.isConnected || !root.contains(g)) continue;
      const f = firstUsable(g);
      if (f) return f;
    }
    return home();
  };
  const lost = (): boolean => {
    const a = doc.activeElement as HTMLElement | null;
    if (!a || a === doc.body || a === doc.documentElement) return true;
    return root.contains(a) && a !== root && !usable(a);
  };
  const check = () => {
    queued = false;
    if (owned && lost()) recover().focus({ preventScroll: true });
  };
  const soon = () => { if (!queued) { queued = true; queueMicrotask(check); } };

  const onFocusIn = (e: FocusEvent) => {
    const t = e.target as HTMLElement;
    owned = true;
    if (t === root || !root.contains(t)) return;
    last = t;
    lastKey = focusKeyOf(t);
    groups = [];
    for (let g = t.parentElement?.closest<HTMLElement>("[data-focus-group]"); g && root.contains(g); g = g.parentElement?.closest<HTMLElement>("[data-focus-group]")) groups.push(g);
  };
  const onFocusOut = (e: FocusEvent) => { if (e.relatedTarget === null) setTimeout(check, 0); };
  const outside = (e: Event) => { if (!root.contains(e.target as Node)) owned = false; };
  const onPress = () => { owned = true; };
  const onClick = (e: MouseEvent) => {
    if (!opts.pointerHome?.() || e.detail === 0) return; // a click from the keyboard keeps its focus
    const control = (e.target as HTMLElement | null)?.closest?.<HTMLElement>("button, input, a[href], summary, label");
    if (!control || !root.contains(control) || control.matches(TYPING) || control.querySelector(TYPING)) return;
    const raf = typeof requestAnimationFrame === "function" ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16);
    raf(() => { // after the render the click scheduled, unless it put the focus in a text field
      const a = doc.activeElement as HTMLElement | null;
      if (owned && !(a && root.contains(a) && a.matches(TYPING))) home().focus({ preventScroll: true });
    });
  };
  const mo = typeof MutationObserver === "function" ? new MutationObserver(soon) : null;
  mo?.observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "hidden", "class", "style"] });
  root.addEventListener("focusin", onFocusIn, true);
  root.addEventListener("focusout", onFocusOut, true);
  root.addEventListener("pointerdown", onPress, true);
  root.addEventListener("click", onClick);
  doc.addEventListener("pointerdown", outside, true);
  doc.addEventListener("focusin", outside, true);
  return {
    get owned() { return owned; },
    check,
    dispose() {
      mo?.disconnect();
      root.removeEventListener("focusin", onFocusIn, true);
      root.removeEventListener("focusout", onFocusOut, true);
      root.removeEventListener("pointerdown", onPress, true);
      root.removeEventListener("click", onClick);
      doc.removeEventListener("pointerdown", outside, true);
      doc.removeEventListener("focusin", outside, true);
    },
  };
}

/** Wrap a render: when the focus is on a stage card and the current stage moves (a clicker key,
 *  playback, a live run), the focus moves with it — a ring never lingers on a card the stage has
 *  left, so one card looks current (issue 37 item 6). Focus roved to another card by the arrows
 *  stays there while the current stage does not move. */
export function followCurrent(root: HTMLElement, render: () => void): () => void {
  const CURRENT = '.dsh-stage[aria-current="step"]';
  return () => {
    const doc = root.ownerDocument;
    const a = doc.activeElement;
    const onStage = a instanceof HTMLElement && root.contains(a) && a.classList.contains("dsh-stage");
    const before = root.querySelector(CURRENT)?.getAttribute("data-stage") ?? null;
    render();
    if (!onStage) return;
    const now = root.querySelector<HTMLElement>(CURRENT);
    if (now && now.dataset.stage !== before && doc.activeElement !== now) now.focus({ preventScroll: true });
  };
}
