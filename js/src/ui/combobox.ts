// A searchable filter (issue 38 item 3: the turn filter was a menu of 8,334 entries): the WAI-ARIA
// combobox pattern — an input (role="combobox", aria-expanded, aria-controls, aria-autocomplete
// "list", aria-activedescendant) and a popup listbox of at most MAX_SHOWN options that match what
// is typed, the first one "all". Keyboard: ↓ / ↑ (Alt+↓ opens) move the active option, Home / End,
// Enter picks it, Escape closes (a second Escape clears the text), Tab leaves with the choice kept.
// A pointer picks an option too. `onPick` gets the picked value ("" for all).
import { uid } from "./a11y";
import { h } from "./dom";

const MAX_SHOWN = 50;

export interface Combobox {
  el: HTMLElement;
  input: HTMLInputElement;
  /** The values it offers (numbers or text), in order. */
  setValues(values: readonly (string | number)[]): void;
  /** The picked value ("" for all), shown in the input. */
  value: string;
  dispose(): void;
}

/** `label`: the accessible name; `all`: the text of the first option (no filter). */
export function createCombobox(cls: string, label: string, all: string, onPick: (value: string) => void): Combobox {
  const id = uid("dsh-cb");
  const input = h("input", { class: `dsh-combo-input ${cls}`, type: "text", role: "combobox", "aria-label": label,
    "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": `${id}-list`, autocomplete: "off",
    spellcheck: "false", placeholder: all }) as HTMLInputElement;
  const list = h("ul", { class: "dsh-combo-list", id: `${id}-list`, role: "listbox", "aria-label": label, hidden: true });
  const status = h("span", { class: "dsh-sr-only", role: "status", "aria-live": "polite" });
  const el = h("span", { class: "dsh-combo" }, input, status); // the popup is in the DOM only while open
  let values: string[] = [];
  let shown: string[] = [];
  let active = -1;
  let typed = false; // the active option follows the text (the first match) until an arrow moves it
  let picked = "";

  const matching = (text: string): string[] => {
    const t = text.trim().toLowerCase();
    if (!t || t === picked.toLowerCase()) return values;
    const starts = values.filter((v) => v.toLowerCase().startsWith(t));
    return starts.length ? starts.concat(values.filter((v) => !v.toLowerCase().startsWith(t) && v.toLowerCase().includes(t))) : values.filter((v) => v.toLowerCase().includes(t));
  };
  const optionId = (i: number) => `${id}-o${i}`;
  function draw(): void {
    const found = matching(input.value);
    shown = ["", ...found.slice(0, MAX_SHOWN)];
    // typed before the values came (a long session's turns arrive with its facets): still the first match
    if (typed) active = input.value.trim() && shown.length > 1 ? 1 : 0;
    if (active >= shown.length) active = shown.length - 1;
    list.dataset.matches = String(found.length);
    list.replaceChildren(...shown.map((v, i) => h("li", { class: `dsh-combo-opt${i === active ? " dsh-combo-active" : ""}`, id: optionId(i),
      role: "option", "aria-selected": String(v === picked), "data-value": v }, v === "" ? all : v)));
    if (found.length > MAX_SHOWN) list.append(h("li", { class: "dsh-combo-more dsh-muted", role: "presentation" }, `${found.length - MAX_SHOWN} more — type to narrow`));
    if (active >= 0) input.setAttribute("aria-activedescendant", optionId(active)); else input.removeAttribute("aria-activedescendant");
    status.textContent = `${found.length} ${found.length === 1 ? "match" : "matches"}`;
    list.querySelector(".dsh-combo-active")?.scrollIntoView?.({ block: "nearest" });
  }
  function open(): void {
    if (!list.hidden) return;
    list.hidden = false;
    el.insertBefore(list, status);
    input.setAttribute("aria-expanded", "true");
    draw();
  }
  function close(): void {
    list.hidden = true;
    list.remove();
    active = -1;
    typed = false;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }
  function pick(v: string): void {
    picked = v;
    input.value = v;
    close();
    onPick(v);
  }
  // typing makes the first match the active option (Enter picks it); an empty text, "all"
  input.addEventListener("input", () => { typed = true; open(); draw(); });
  input.addEventListener("focus", () => input.select());
  input.addEventListener("blur", () => {
    setTimeout(() => { if (document.activeElement !== input) { close(); input.value = picked; } }, 0);
  });
  input.addEventListener("keydown", (e) => {
    const k = e.key;
    if (k === "ArrowDown" || k === "ArrowUp") {
      e.preventDefault();
      typed = false;
      if (list.hidden) { open(); active = k === "ArrowDown" ? Math.max(0, shown.indexOf(picked)) : shown.length - 1; draw(); return; }
      active = Math.max(0, Math.min(shown.length - 1, active + (k === "ArrowDown" ? 1 : -1)));
      draw();
    } else if ((k === "Home" || k === "End") && !list.hidden) {
      e.preventDefault();
      typed = false;
      active = k === "Home" ? 0 : shown.length - 1;
      draw();
    } else if (k === "Enter") {
      e.preventDefault();
      if (!list.hidden && active >= 0) pick(shown[active]);
      else if (!input.value.trim()) pick("");
      else { const m = matching(input.value); if (m.length) pick(m[0]); }
    } else if (k === "Escape") {
      e.preventDefault();
      if (!list.hidden) { close(); return; }
      if (input.value) { input.value = ""; pick(""); }
    } else if (k === "Tab") {
      close();
      input.value = picked;
    }
    e.stopPropagation(); // the keys are the filter's (not the notebook's, not the widget's shortcuts)
  });
  list.addEventListener("mousedown", (e) => e.preventDefault()); // the input keeps the focus
  list.addEventListener("click", (e) => {
    const opt = (e.target as Element | null)?.closest?.(".dsh-combo-opt") as HTMLElement | null;
    if (opt) pick(opt.dataset.value ?? "");
  });
  return {
    el,
    input,
    setValues(vs) {
      const next = vs.map(String);
      if (next.length === values.length && next[next.length - 1] === values[values.length - 1]) return;
      values = next;
      if (!list.hidden) draw();
    },
    get value() { return picked; },
    set value(v: string) { picked = v; input.value = v; },
    dispose() { close(); },
  };
}
