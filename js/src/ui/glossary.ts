// The "Glossary" button of both widgets' headers and its popover: every term a learner meets,
// from ../glossary.gen.ts (which `make types` writes from the Python module dsh_notebook.glossary —
// one source). A popover, not a link: notebooks are often offline, and an exported page has no server.
import { GLOSSARY, TOPICS, type GlossaryTerm } from "../glossary.gen";
import { h, replace } from "./dom";

export interface Glossary { button: HTMLButtonElement; panel: HTMLElement; open(term?: string): void; close(): void }

/** The term a word names (its term or one of its aliases, case-insensitive). */
export function lookup(word: string): GlossaryTerm | undefined {
  const w = word.toLowerCase();
  return GLOSSARY.find((t) => t.term.toLowerCase() === w || t.aliases.some((a) => a.toLowerCase() === w));
}

export function matches(t: GlossaryTerm, query: string): boolean {
  const q = query.trim().toLowerCase();
  return !q || [t.term, t.definition, ...t.aliases].some((s) => s.toLowerCase().includes(q));
}

let counter = 0;

export function createGlossary(): Glossary {
  const id = `dsh-glossary-${++counter}`;
  const button = h("button", { class: "dsh-btn dsh-glossary-btn", type: "button", "aria-expanded": "false", "aria-controls": id,
    title: "what the words of this widget mean" }, "Glossary") as HTMLButtonElement;
  const search = h("input", { class: "dsh-glossary-search", type: "search", placeholder: "find a term…", "aria-label": "find a term" }) as HTMLInputElement;
  const closeBtn = h("button", { class: "dsh-btn dsh-glossary-close", type: "button", "aria-label": "close the glossary" }, "Close");
  const list = h("div", { class: "dsh-glossary-list" });
  const panel = h("div", { class: "dsh-glossary", id, role: "dialog", "aria-label": "Glossary", hidden: true },
    h("div", { class: "dsh-glossary-head" }, h("span", { class: "dsh-glossary-title" }, "Glossary"), search, closeBtn), list);

  const fill = () => {
    const groups = Object.entries(TOPICS).map(([topic, title]) => {
      const terms = GLOSSARY.filter((t) => t.topic === topic && matches(t, search.value));
      if (!terms.length) return null;
      return h("section", { class: "dsh-glossary-topic" }, h("h4", null, title),
        h("dl", null, ...terms.flatMap((t) => [
          h("dt", { "data-term": t.term, id: `${id}-${t.anchor}` }, t.term),
          h("dd", null, t.definition, t.aliases.length ? h("span", { class: "dsh-glossary-also" }, ` (also: ${t.aliases.join(", ")})`) : null),
        ])));
    });
    replace(list, ...(groups.some(Boolean) ? groups : [h("div", { class: "dsh-muted" }, `No term matches “${search.value}”.`)]));
  };
  const open = (term?: string) => {
    panel.hidden = false;
    button.setAttribute("aria-expanded", "true");
    search.value = "";
    fill();
    const found = term ? lookup(term) : undefined;
    const target = found ? list.querySelector(`[data-term="${CSS.escape(found.term)}"]`) : null;
    if (target) { target.classList.add("dsh-glossary-hit"); target.scrollIntoView?.({ block: "nearest" }); }
    search.focus({ preventScroll: true });
  };
  const close = () => {
    panel.hidden = true;
    button.setAttribute("aria-expanded", "false");
    button.focus({ preventScroll: true });
  };
  button.addEventListener("click", () => (panel.hidden ? open() : close()));
  closeBtn.addEventListener("click", close);
  search.addEventListener("input", fill);
  // keys typed here are the glossary's, never the notebook's shortcuts
  panel.addEventListener("keydown", (e) => { e.stopPropagation(); if (e.key === "Escape") close(); });
  return { button, panel, open, close };
}
