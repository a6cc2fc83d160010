// Presenter mode (issue 23 item 1, issue 37 item 2): the "Present" toggle of both widgets' headers
// and the text size control. In presenter mode the root carries .dsh-present and
// --dsh-present-size; the styles (widget.css, "presenter mode") make every text at least that
// size, lay the widget out for a 1024×768 projector (ui/presenter.ts) and hide the chrome a
// lesson does not need. The widget also follows JupyterLab's own View → Presentation Mode: the
// shell's `jp-mod-presentationMode` class turns presenter mode on while it is set.
import { h } from "./dom";

/** The text sizes in presenter mode (px at 100 % zoom); the first is the default. */
export const PRESENT_SIZES = [18, 20, 24, 28, 32] as const;

export interface PresentControls {
  /** The header's toggle and the size control (shown only in presenter mode). */
  el: HTMLElement;
  readonly on: boolean;
  readonly size: number;
  set(on: boolean): void;
}

/** Where presenter mode was switched: the widget's own toggle (saved in its `present` trait) or
 *  JupyterLab's presentation mode (not saved: the page's state, not the widget's). */
export type PresentSource = "toggle" | "lab";

/** JupyterLab's presentation mode (View → Presentation Mode): a class on the shell. */
export const LAB_PRESENTATION = "jp-mod-presentationMode";

export function createPresentControls(root: HTMLElement, changed: (on: boolean, source: PresentSource) => void): PresentControls {
  let on = false;
  let size: number = PRESENT_SIZES[0];
  const toggle = h("button", { class: "dsh-btn dsh-present-btn", type: "button", "aria-pressed": "false",
    title: "presenter mode: large text for a projector, a clicker drives the stages (PageDown / PageUp)" }, "Present") as HTMLButtonElement;
  const smaller = h("button", { class: "dsh-btn dsh-present-smaller", type: "button", "aria-label": "smaller text", title: "smaller text" }, "A−") as HTMLButtonElement;
  const bigger = h("button", { class: "dsh-btn dsh-present-bigger", type: "button", "aria-label": "larger text", title: "larger text" }, "A+") as HTMLButtonElement;
  const label = h("span", { class: "dsh-present-size", "aria-live": "polite" });
  // a focus group: A+ disabled at its end hands the focus to A− (ui/focus.ts)
  const sizer = h("span", { class: "dsh-present-sizer", role: "group", "aria-label": "text size", "data-focus-group": "" }, smaller, label, bigger);
  const el = h("span", { class: "dsh-present-ctl" }, toggle, sizer);
  const apply = () => {
    root.classList.toggle("dsh-present", on);
    root.dataset.present = String(on);
    root.style.setProperty("--dsh-present-size", `${size}px`);
    toggle.setAttribute("aria-pressed", String(on));
    toggle.classList.toggle("dsh-present-on", on);
    sizer.hidden = !on;
    label.textContent = `${size} px`;
    const i = PRESENT_SIZES.indexOf(size as (typeof PRESENT_SIZES)[number]);
    smaller.disabled = i <= 0;
    bigger.disabled = i >= PRESENT_SIZES.length - 1;
  };
  const step = (d: 1 | -1) => {
    const i = PRESENT_SIZES.indexOf(size as (typeof PRESENT_SIZES)[number]);
    size = PRESENT_SIZES[Math.max(0, Math.min(PRESENT_SIZES.length - 1, i + d))];
    apply();
  };
  toggle.addEventListener("click", () => { on = !on; apply(); changed(on, "toggle"); });
  smaller.addEventListener("click", () => step(-1));
  bigger.addEventListener("click", () => step(1));
  apply();
  return {
    el,
    get on() { return on; },
    get size() { return size; },
    set(v: boolean) { if (v !== on) { on = v; apply(); } },
  };
}

/** Call `changed` with JupyterLab's presentation mode now and whenever it changes (the shell's
 *  class, observed); returns the disconnect. Outside JupyterLab (no shell) it never calls. */
export function followLabPresentation(root: HTMLElement, changed: (on: boolean) => void): () => void {
  const shell = root.closest<HTMLElement>(".jp-LabShell") ?? root.ownerDocument.querySelector<HTMLElement>(".jp-LabShell");
  if (!shell || typeof MutationObserver !== "function") return () => undefined;
  let was = shell.classList.contains(LAB_PRESENTATION);
  if (was) changed(true);
  const mo = new MutationObserver(() => {
    const now = shell.classList.contains(LAB_PRESENTATION);
    if (now !== was) { was = now; changed(now); }
  });
  mo.observe(shell, { attributes: true, attributeFilter: ["class"] });
  return () => mo.disconnect();
}
