// The agent debugger's controls in the loop widget: pause-at-stage toggles (on the diagram's
// cards), a tools filter, and while the run is paused a bar with Step, Continue, Cancel, Edit —
// Edit opens a JSON editor prefilled with the stage's value that checks it before it is sent.
// "Run to…" pauses once at a chosen stage of a chosen call (a one-shot breakpoint; from a pause it
// goes on), and says so when the turn is past it or ends first.
import type { PauseState } from "../types";
import {
  breakArgs, callChoices, checkEdit, EDIT_AT, editArgs, editorText, parseTools, pauseKey, pauseLabel, refusal, runToArgs, stageKey, toggleStage,
  type Breakpoints, type DebugStage, type EditTarget,
} from "../model/debug";
import { STAGES, type StageNo } from "../model/stages";
import type { DebugArgs, DebugState } from "../wire.gen";
import { h } from "./dom";

export interface DebugDeps {
  sessionId(): string | null | undefined;
  debug(args: DebugArgs): Promise<DebugState>;
  cancel(sessionId: string): Promise<unknown>;
  /** Something the diagram shows changed (the breakpoints). */
  changed(): void;
  /** The session's traced tool calls and the running turn (null: idle), for "Run to…". */
  calls?(): readonly { callId: string; name: string; turn?: number }[];
  turn?(): number | null;
}

const errText = (e: unknown): string => `${(e as { code?: string }).code ?? "ERROR"}: ${(e as Error).message}`;

export class DebugPanel {
  readonly el = h("div", { class: "dsh-debug" });
  bp: Breakpoints = { stages: [], tools: [] };
  private readonly tools = h("input", { class: "dsh-debug-tools", type: "text", placeholder: "all tools", "aria-label": "pause only for these tools (comma separated; empty: every tool)" });
  private readonly summary = h("span", { class: "dsh-debug-summary" });
  private readonly bar = h("div", { class: "dsh-debug-bar", role: "region", "aria-label": "debugger: the run is paused" });
  private readonly label = h("span", { class: "dsh-debug-label" });
  private readonly editBtn = h("button", { class: "dsh-btn dsh-debug-edit", type: "button", "aria-expanded": "false" }, "Edit");
  private readonly editor = h("div", { class: "dsh-debug-editor" });
  private readonly editorLabel = h("label", { class: "dsh-debug-editor-label" });
  private readonly area = h("textarea", { class: "dsh-debug-json", spellcheck: "false", rows: 8 });
  private readonly editHint = h("div", { class: "dsh-debug-hint" }, "Ctrl+Enter applies (checked first) · Escape discards");
  private readonly editError = h("div", { class: "dsh-debug-error", role: "alert" });
  private readonly status = h("div", { class: "dsh-debug-status", "aria-live": "polite" });
  private shown: string | null = null;
  /** The action button that had focus when the bar hid (Step/Continue): the next pause gets it back. */
  private refocus: string | null = null;
  /** While the bar is hidden for a run between two pauses: the widget's root, and whether the person
   *  pressed a key or a pointer in it since. The widget keeps the focus inside while the bar is
   *  hidden (it moves it to the current stage), which is not the person's choice; a press is. */
  private between: { root: HTMLElement; touched: boolean; off: () => void } | null = null;
  private pause: PauseState | null = null;
  private busy = false;
  /** The editor's text as it opened, and the action already warned about an unapplied edit. */
  private prefill = "";
  private warned: "step" | "continue" | null = null;
  private readonly runBtn = h("button", { class: "dsh-btn dsh-debug-runto", type: "button", "aria-expanded": "false", title: "pause once at a stage of a tool call (a one-shot breakpoint); while paused, it goes on" }, "Run to…");
  private readonly runForm = h("div", { class: "dsh-debug-runto-form", role: "group", "aria-label": "run to a stage of a call" });
  private readonly runStage = h("select", { class: "dsh-debug-runto-stage", "aria-label": "stage" });
  private readonly runCall = h("select", { class: "dsh-debug-runto-call", "aria-label": "tool call" });
  /** The run-to asked for and not reached yet ("stage 05 of c3"): the turn's end checks it. */
  private pending: string | null = null;
  private lastStatus: string | null = null;

  constructor(private readonly deps: DebugDeps, readonly: boolean) {
    const id = `dsh-debug-json-${Math.random().toString(36).slice(2, 8)}`;
    this.area.id = id;
    this.editorLabel.setAttribute("for", id);
    this.editHint.id = `${id}-hint`;
    this.editError.id = `${id}-error`;
    this.area.setAttribute("aria-describedby", `${this.editHint.id} ${this.editError.id}`);
    const step = this.button("Step", "dsh-debug-step", "run to the next stage, whatever it is", () => this.act("step"));
    const cont = this.button("Continue", "dsh-debug-continue", "run to the next breakpoint", () => this.act("continue"));
    const cancel = this.button("Cancel", "dsh-debug-cancel", "cancel the turn (every tool call still gets a result)", () => this.cancelTurn());
    this.editBtn.addEventListener("click", () => this.openEditor(this.editor.hidden, true));
    const apply = this.button("Apply edit", "dsh-debug-apply", "check the JSON and send it to the paused run", () => this.apply());
    const discard = this.button("Discard", "dsh-debug-discard", "close the editor without sending", () => this.openEditor(false, true));
    this.area.addEventListener("input", () => { this.editError.hidden = true; this.area.removeAttribute("aria-invalid"); this.warned = null; });
    this.editor.addEventListener("keydown", (e) => this.editorKey(e));
    this.editor.append(this.editorLabel, this.area, this.editHint, this.editError, h("div", { class: "dsh-debug-editor-actions" }, apply, discard));
    this.bar.append(h("span", { class: "dsh-debug-icon", "aria-hidden": "true" }), this.label, step, cont, cancel, this.editBtn);
    this.tools.addEventListener("change", () => { this.bp = { stages: this.bp.stages, tools: parseTools(this.tools.value) }; void this.send(); });
    const filter = h("label", { class: "dsh-debug-filter" }, "Pause only for tools ", this.tools);
    for (const st of STAGES) this.runStage.append(h("option", { value: stageKey(st.no) }, `${stageKey(st.no)} · ${st.title}`));
    const go = this.button("Run", "dsh-debug-runto-go", "run until the loop reaches this stage of this call, and pause there", () => void this.runTo());
    const close = this.button("Close", "dsh-debug-runto-close", "close without running", () => this.openRunTo(false));
    this.runForm.append(h("label", {}, "Run to stage ", this.runStage), h("label", {}, " of call ", this.runCall), go, close);
    this.runForm.addEventListener("keydown", (e) => {
      e.stopPropagation(); // the notebook's shortcuts stay out of the form
      if (e.key === "Escape") { e.preventDefault(); this.openRunTo(false); }
      else if (e.key === "Enter" && e.target instanceof HTMLSelectElement) { e.preventDefault(); void this.runTo(); }
    });
    this.runBtn.addEventListener("click", () => this.openRunTo(this.runForm.hidden));
    this.runForm.hidden = true;
    this.el.append(h("div", { class: "dsh-debug-head" }, this.summary, readonly ? null : filter, readonly ? null : this.runBtn), this.runForm, this.bar, this.editor, this.status);
    this.editor.hidden = true;
    this.editError.hidden = true;
    this.bar.hidden = true;
    this.el.hidden = readonly;
    this.renderSummary();
  }

  private button(text: string, cls: string, title: string, onClick: () => void): HTMLButtonElement {
    const b = h("button", { class: `dsh-btn ${cls}`, type: "button", title }, text);
    b.addEventListener("click", onClick);
    return b;
  }

  /** The pause-at-stage toggle of a diagram card. */
  toggle(no: StageNo): HTMLElement {
    const key = stageKey(no);
    const on = this.bp.stages.includes(key);
    const b = h("button", {
      class: `dsh-break${on ? " dsh-break-on" : ""}`, type: "button", "aria-pressed": on ? "true" : "false",
      "data-stage": no, "aria-label": `pause at stage ${key}`, title: on ? `breakpoint at ${key}: the run pauses here, ${STAGES[no - 1].pause} (click to remove)` : `pause the run at stage ${key}: ${STAGES[no - 1].pause}`,
    }, h("span", { class: "dsh-break-icon", "aria-hidden": "true" }), on ? "pauses here" : "pause");
    b.addEventListener("click", (e) => { e.stopPropagation(); this.bp = toggleStage(this.bp, key); this.deps.changed(); void this.send(); });
    b.addEventListener("keydown", (e) => e.stopPropagation()); // Enter/Space toggle, not seek the card
    return b;
  }

  /** Send the breakpoints (after a toggle, and once a new session exists). */
  async send(): Promise<void> {
    this.renderSummary();
    const sid = this.deps.sessionId();
    if (!sid) return;
    try {
      await this.deps.debug(breakArgs(sid, this.bp));
      if (this.status.classList.contains("dsh-debug-status-err")) this.setStatus("");
    } catch (e) { this.setStatus(`breakpoints not set: ${errText(e)}`, true); }
  }

  /** Take the host's breakpoints (a widget that follows an existing session). */
  load(st: DebugState): void {
    this.bp = { stages: [...(st.stages ?? [])].sort(), tools: [...(st.tools ?? [])] };
    this.tools.value = this.bp.tools.join(", ");
    this.renderSummary();
    this.deps.changed();
  }

  /** Each render: show or hide the bar for the fold's pause; a new pause resets the editor. */
  update(paused: PauseState | null): void {
    this.pause = paused;
    const key = paused ? pauseKey(paused) : null;
    if (key === this.shown) return;
    this.shown = key;
    const focused = this.focusedAction();
    if (focused) this.refocus = focused;
    this.setStatus(""); // what was said was about the previous pause
    this.bar.hidden = !paused;
    this.busy = false;
    this.openEditor(false, false);
    if (!paused) { if (this.refocus) this.watchBetween(); return; }
    this.label.textContent = pauseLabel(paused);
    const target = paused.editable as EditTarget | null;
    this.editBtn.disabled = !target;
    this.editBtn.title = target ? `edit ${EDIT_AT[target].label}` : "nothing is editable here: edits apply at 02–03 (arguments), 04 (result), 06 (request)";
    // keyboard flow: the Step/Continue that was pressed has focus again at the next pause, unless
    // the person put it elsewhere meanwhile (however long the run between the pauses took)
    const between = this.between;
    this.between = null;
    between?.off();
    const a = typeof document !== "undefined" ? document.activeElement : null;
    const free = !a || a === document.body || !a.isConnected || (between !== null && !between.touched && between.root.contains(a));
    const again = this.refocus && free ? this.bar.querySelector<HTMLButtonElement>(`.${this.refocus}`) : null;
    this.refocus = null;
    // after the render this update is part of: it puts back the focus of the nodes it replaced
    if (again) queueMicrotask(() => { if (!this.bar.hidden && again.isConnected) again.focus(); });
  }

  /** The bar hid with Step/Continue focused: note a press of the person's in the widget until the next pause. */
  private watchBetween(): void {
    this.between?.off();
    const root = this.el.closest<HTMLElement>(".dsh-root") ?? this.el.parentElement ?? this.el;
    const touch = () => { if (this.between) this.between.touched = true; };
    for (const ev of ["keydown", "pointerdown"]) root.addEventListener(ev, touch, true);
    this.between = { root, touched: false, off: () => { for (const ev of ["keydown", "pointerdown"]) root.removeEventListener(ev, touch, true); } };
  }

  /** The class of the bar's action button that has keyboard focus now, if any. */
  private focusedAction(): string | null {
    const a = typeof document !== "undefined" ? document.activeElement : null;
    if (!(a instanceof HTMLElement) || !this.bar.contains(a)) return null;
    return ["dsh-debug-step", "dsh-debug-continue"].find((c) => a.classList.contains(c)) ?? null;
  }

  /** Open (focus into the text) or close the editor; closing with `refocus` (or while the editor
   *  has focus) puts focus back on the Edit button. */
  private openEditor(open: boolean, refocus: boolean): void {
    const p = this.pause;
    const target = p?.editable as EditTarget | null | undefined;
    const wasOpen = !this.editor.hidden;
    const hadFocus = typeof document !== "undefined" && this.editor.contains(document.activeElement);
    if (open && p && target) {
      this.editorLabel.textContent = `Edit ${EDIT_AT[target].label} at stage ${p.stage}`;
      this.area.value = this.prefill = editorText(p) ?? "";
      this.warned = null;
      this.area.rows = Math.min(22, Math.max(6, this.area.value.split("\n").length + 1)); // a request: room to read
      this.area.removeAttribute("aria-invalid");
      this.editError.hidden = true;
      this.editor.hidden = false;
      this.area.focus();
    } else {
      this.editor.hidden = true;
      if (wasOpen && (refocus || hadFocus) && !this.bar.hidden) this.editBtn.focus();
    }
    this.editBtn.setAttribute("aria-expanded", String(!this.editor.hidden));
  }

  private editorKey(e: KeyboardEvent): void {
    e.stopPropagation(); // the notebook's shortcuts (Escape, Ctrl+Enter run cell) stay out of the editor
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); void this.apply(); }
    else if (e.key === "Escape") { e.preventDefault(); this.openEditor(false, true); }
  }

  private showRefusal(text: string): void {
    this.editError.textContent = text;
    this.editError.hidden = false;
    this.area.setAttribute("aria-invalid", "true");
  }

  private async apply(): Promise<void> {
    const p = this.pause;
    const sid = this.deps.sessionId();
    const target = p?.editable as EditTarget | null | undefined;
    if (!p || !sid || !target) return;
    const checked = checkEdit(target, this.area.value);
    if (!checked.ok) return this.showRefusal(refusal(checked));
    this.area.removeAttribute("aria-invalid");
    try {
      const st = await this.deps.debug(editArgs(sid, p, checked.value));
      this.openEditor(false, true);
      this.setStatus(`edited: debug/edit #${st.editSeq ?? "?"} — Step or Continue goes on with it`);
    } catch (e) {
      this.showRefusal(`Not applied — the host refused the edit: ${errText(e)}`);
    }
  }

  private async act(action: "step" | "continue"): Promise<void> {
    const sid = this.deps.sessionId();
    if (!sid || this.busy) return;
    if (!this.editor.hidden && this.area.value !== this.prefill && this.warned !== action) {
      this.warned = action; // a changed, unapplied edit would be lost: say so once, the same press again goes on
      const name = action === "step" ? "Step" : "Continue";
      this.setStatus(`The edit in the editor is not applied: Apply edit (Ctrl+Enter) first, or press ${name} again to go on without it.`, true);
      return;
    }
    this.busy = true;
    this.setStatus(action === "step" ? "stepping to the next stage…" : "continuing to the next breakpoint…");
    try { await this.deps.debug({ sessionId: sid, action }); }
    catch (e) { this.setStatus(`${action} failed: ${errText(e)}`, true); }
    finally { this.busy = false; }
  }

  /** Open (focus on the stage select, the calls listed afresh) or close the run-to form. */
  private openRunTo(open: boolean): void {
    if (open) {
      const keep = this.runCall.value;
      this.runCall.replaceChildren(...callChoices(this.deps.calls?.() ?? [], this.deps.turn?.() ?? null)
        .map((c) => h("option", { value: c.value }, c.label)));
      if (keep && [...this.runCall.options].some((o) => o.value === keep)) this.runCall.value = keep;
      if (this.pause && !keep) this.runStage.value = this.pause.stage; // from a pause: this stage, a later call
      this.runForm.hidden = false;
      this.runStage.focus();
    } else {
      const had = typeof document !== "undefined" && this.runForm.contains(document.activeElement);
      this.runForm.hidden = true;
      if (had) this.runBtn.focus();
    }
    this.runBtn.setAttribute("aria-expanded", String(!this.runForm.hidden));
  }

  private async runTo(): Promise<void> {
    const sid = this.deps.sessionId();
    const stage = this.runStage.value as DebugStage, call = this.runCall.value;
    if (!sid || !call) { this.setStatus("run to: no session yet — send a prompt first", true); return; }
    try {
      await this.deps.debug(runToArgs(sid, stage, call));
      this.pending = `stage ${stage} of ${call}`;
      this.openRunTo(false);
      this.runBtn.focus();
      this.setStatus(`running to ${this.pending} — other breakpoints still pause on the way`);
    } catch (e) {
      this.setStatus(`run to stage ${stage} of ${call}: not set — ${errText(e)}`, true);
    }
  }

  /** Each render: when a turn ends, a run-to asked here and not reached says why. */
  settle(status: string): void {
    const was = this.lastStatus;
    this.lastStatus = status;
    const asked = this.pending, sid = this.deps.sessionId();
    if (!asked || !sid || status !== "idle" || was === "idle" || was === null) return;
    this.pending = null;
    void this.deps.debug({ sessionId: sid, action: "state" }).then((st) => {
      if (st.runToMissed) this.setStatus(`run to ${asked}: not reached — ${st.runToMissed}`, true);
      else if (st.runTo) this.pending = asked; // set for the next turn
    }).catch(() => undefined);
  }

  private async cancelTurn(): Promise<void> {
    const sid = this.deps.sessionId();
    if (!sid) return;
    try { await this.deps.cancel(sid); this.setStatus("cancelled the turn"); } catch (e) { this.setStatus(`cancel failed: ${errText(e)}`, true); }
  }

  private setStatus(text: string, err = false): void {
    this.status.textContent = text;
    this.status.classList.toggle("dsh-debug-status-err", err);
  }

  private renderSummary(): void {
    const st = this.bp.stages;
    this.summary.textContent = st.length ? `Breakpoints: ${st.join(", ")}${this.bp.tools.length ? ` (only ${this.bp.tools.join(", ")})` : ""}` : "Breakpoints: none — press “pause” on a stage to stop the run there";
  }
}

/** Rebuild `container` with `build`, keeping keyboard focus on the pause toggle that had it. */
export function keepToggleFocus(container: HTMLElement, build: () => void): void {
  const active = typeof document !== "undefined" ? document.activeElement : null;
  const stage = active instanceof HTMLElement && container.contains(active) && active.classList.contains("dsh-break") ? active.dataset.stage : undefined;
  build();
  if (stage) (container.querySelector(`.dsh-break[data-stage="${stage}"]`) as HTMLElement | null)?.focus();
}
