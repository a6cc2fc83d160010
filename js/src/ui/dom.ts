// Tiny DOM helpers: no framework, so the bundle stays small and runs in any notebook front end.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
      else if (k === "class") el.className = String(v);
      else if (k === "text") el.textContent = String(v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
}

/** Replace the children of `el` (cheap enough at our sizes; long lists are virtualised). */
export function replace(el: Element, ...children: (Child | Child[])[]): void {
  el.textContent = "";
  append(el, children);
}

/** Run `fn` at most once per animation frame (coalesces bursts of model updates). */
export function frameThrottle(fn: () => void): { schedule(): void; cancel(): void; flush(): void } {
  let pending = false;
  let handle = 0;
  const raf = typeof requestAnimationFrame === "function" ? requestAnimationFrame : (cb: FrameRequestCallback) => setTimeout(() => cb(0), 16) as unknown as number;
  const caf = typeof cancelAnimationFrame === "function" ? cancelAnimationFrame : (id: number) => clearTimeout(id);
  return {
    schedule() {
      if (pending) return;
      pending = true;
      handle = raf(() => { pending = false; fn(); });
    },
    cancel() { if (pending) caf(handle); pending = false; },
    flush() { if (pending) { caf(handle); pending = false; } fn(); },
  };
}

/** A toolbar button: `label` shown, `title` its tooltip and accessible name, `onClick` on a click. */
export function button(cls: string, label: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = h("button", { class: `dsh-btn ${cls}`, type: "button", title, "aria-label": title }, label);
  b.addEventListener("click", onClick);
  return b;
}

/** A duration as people read it: "180 ms", "2.34 s", "12.5 s", "3 min 4 s" (every view's one format). */
export function fmtMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 60_000 ? `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtTime(ms: number | undefined): string {
  if (!ms) return "";
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** A click is a press and a release on the same node. A live run re-renders several times a second
 *  and `replace()` swaps the nodes, so a press on a stage card or a tab could be released on its
 *  successor and the click lost. While a pointer is down inside `root` (not on a text field or a
 *  slider, which keep their nodes and must follow the drag) `hold()` says "wait"; the release
 *  renders what was held back, after the click has been dispatched. */
export function pressGuard(root: HTMLElement, rerender: () => void): { hold(): boolean; dispose(): void } {
  let down = false;
  let missed = false;
  const press = (e: Event) => {
    const t = e.target as HTMLElement | null;
    down = !t?.closest?.("input, textarea, select");
  };
  const release = () => {
    if (!down) return;
    down = false;
    if (missed) { missed = false; setTimeout(rerender, 0); }
  };
  root.addEventListener("pointerdown", press, true);
  for (const ev of ["pointerup", "pointercancel"]) document.addEventListener(ev, release, true);
  window.addEventListener("blur", release);
  return {
    hold() { if (down) missed = true; return down; },
    dispose() {
      root.removeEventListener("pointerdown", press, true);
      for (const ev of ["pointerup", "pointercancel"]) document.removeEventListener(ev, release, true);
      window.removeEventListener("blur", release);
    },
  };
}
