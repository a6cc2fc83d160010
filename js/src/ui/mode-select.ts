// The permission-mode selector of the widget headers (issue 36): a labelled native <select>,
// reachable by Tab and changed with the arrow keys, that sets the session's mode through
// `session/mode` (the change is the event mode/changed; the log, not this control, says what
// the mode is). Bypass shows in red. A saved log (read-only) shows the mode without a control.
// The element persists across renders: an open list is never closed by a re-render.
import { isChosenMode, MODE_HINTS, MODES, type ChosenMode } from "../model/mode";
import { h } from "./dom";

export interface ModeControl {
  el: HTMLElement;
  /** The mode the log says now (null: no session yet); `editable` false: a read-only replay. */
  update(mode: string | null, editable: boolean): void;
  /** The mode picked before any session exists (the next session/create carries it). */
  readonly pending: ChosenMode | null;
}

export function createModeControl(set: (mode: ChosenMode) => Promise<unknown>, onError: (message: string) => void): ModeControl {
  const select = h("select", { class: "dsh-mode-select", "aria-label": "permission mode",
    title: "permission mode: what the agent may do without asking you" }) as HTMLSelectElement;
  const options = [...MODES, "auto"].map((m) => h("option", { value: m, title: MODE_HINTS[m] }, m === "auto" ? "auto (legacy)" : m) as HTMLOptionElement);
  select.append(...options);
  const badge = h("span", { class: "dsh-mode-badge", hidden: true });
  const label = h("label", { class: "dsh-mode-label" }, "mode ", select);
  const el = h("span", { class: "dsh-mode", "data-fkey": "dsh-mode" }, label, badge);
  let shown: string | null = null;
  let pending: ChosenMode | null = null;
  let busy = 0; // changes sent and not answered yet

  const paint = (mode: string) => {
    el.dataset.mode = mode;
    el.classList.toggle("dsh-mode-bypass", mode === "bypass");
    el.title = MODE_HINTS[mode] ?? "";
    const auto = options[options.length - 1];
    auto.hidden = mode !== "auto"; // the legacy mode is shown, never offered
    auto.disabled = mode !== "auto";
    if (select.value !== mode) select.value = mode;
    badge.textContent = `mode ${mode}`;
  };

  // every change is sent, in order (a quick run of arrow keys sends each mode it passes); the
  // control stays enabled, so the keyboard never loses it. A refusal shows the log's mode again.
  let chain: Promise<unknown> = Promise.resolve();
  select.addEventListener("change", () => {
    const want = select.value;
    if (!isChosenMode(want)) return; // the legacy `auto` is shown, never offered
    if (shown === null) { pending = want; paint(want); return; } // no session yet: the create carries it
    busy += 1;
    paint(want);
    chain = chain.then(() => set(want)).then(() => undefined, (e: { code?: string; message?: string }) => {
      onError(`${e.code ?? "ERROR"}: ${e.message ?? e}`);
      if (shown !== null) paint(shown);
    }).finally(() => { busy -= 1; });
  });

  return {
    el,
    get pending() { return pending; },
    update(mode, editable) {
      label.hidden = !editable;
      badge.hidden = editable;
      if (mode === null) { if (shown === null) paint(pending ?? "default"); return; }
      shown = mode;
      if (!busy) paint(mode); // while changes travel the control shows what was picked
    },
  };
}
