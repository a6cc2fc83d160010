// The six-stage diagram of seed 000: current stage lit, done stages marked, real values inside.
import { countOf } from "../model/counts";
import { short, STAGE_ROLES } from "../model/explain";
import { DERIVED_NOTE } from "../model/runtime-log";
import type { StageNo, ToolCallTrace } from "../model/stages";
import { STAGES } from "../model/stages";
import type { RuntimePhase as ToolPhase, ToolRuntimeState } from "../model/runtime-log";
import { onActivate } from "./a11y";
import { withReturnArc } from "./diagram-frame";
import { fmtMs, h } from "./dom";
import { softBreaks } from "./narrow";
import { STAGE_VIEW, VIEWS, type ViewName } from "./views";

export interface DiagramInput {
  call?: ToolCallTrace;
  stage: StageNo | 0;
  /** The log position the view shows: stages whose marker seq is beyond it are "not yet". */
  seq: number;
  runtime?: ToolRuntimeState;
  messageCount?: number;
  frozenCount?: number;
  streaming?: boolean;
  /** The agent debugger: each card's pause-at-stage toggle, and the stage the run is paused at. */
  breakToggle?: (stage: StageNo) => HTMLElement;
  paused?: StageNo | 0;
  /** Stage 01's value while a live turn has no tool call yet (waiting, responding, answered). */
  waiting?: string;
}

export interface DiagramCallbacks {
  onStage(stage: StageNo): void;
  onView(view: ViewName): void;
}

function value(stage: StageNo, d: DiagramInput): string {
  const t = d.call;
  if (!t) return stage === 1 ? d.waiting ?? (d.streaming ? "model streaming…" : "—") : "—";
  // a stage not reached shows no value from later in the log (in a replay the whole log is
  // known: "#12 cites [11]" at 03 answered the predict question before its reveal)
  switch (stage) {
    case 1: return t.assistantSeq !== undefined ? `#${t.assistantSeq} ${t.name} · ${t.callId}` : `${t.name} · ${t.callId}`;
    case 2: return t.callSeq !== undefined && d.stage >= 2 ? `#${t.callSeq} tool/call` : "not yet";
    case 3: {
      const ph = d.runtime?.phases;
      if (d.stage === 3 && ph && ph.length) {
        const last = ph[ph.length - 1];
        return d.runtime?.waiting ? "waiting for approval" : `${last.phase} · ${last.status}`;
      }
      return t.resultSeq !== undefined && d.stage > 3 ? `${t.name} ran${t.isError ? " (error)" : ""}` : `${t.name}`;
    }
    case 4: return t.resultSeq !== undefined && d.stage >= 4 ? `#${t.resultSeq} cites [${t.callSeq ?? "?"}]` : "not yet";
    case 5: return d.messageCount !== undefined && d.stage >= 5 ? countOf(d.messageCount, "message") : "derive_messages";
    case 6: return t.frozenSeq !== undefined && d.stage >= 6 ? `#${t.frozenSeq} request/frozen` : "adapter.stream";
  }
}

export function renderDiagram(d: DiagramInput, cb: DiagramCallbacks): HTMLElement {
  const row = h("ol", { class: "dsh-diagram", "aria-label": "the six stages of the tool feedback loop" });
  for (const s of STAGES) {
    const state = d.stage === s.no ? "current" : d.stage > s.no ? "done" : "todo";
    const roles = STAGE_ROLES[s.no];
    const view = STAGE_VIEW[s.no];
    const link = h("button", { class: "dsh-link dsh-stage-link", type: "button", title: `show the ${view} view` }, `→ ${VIEWS[view].link}`);
    link.addEventListener("click", (e) => { e.stopPropagation(); cb.onView(view); });
    const box = h("li", {
      class: `dsh-stage dsh-stage-${state} dsh-role-${roles[0]}${d.paused === s.no ? " dsh-stage-paused" : ""}`,
      "data-stage": s.no,
      "data-state": state,
      "data-fkey": `stage-${s.no}`,
      tabindex: state === "current" || (d.stage === 0 && s.no === 1) ? 0 : -1,
      // a list item of the stepper, not a button: it holds buttons of its own (the view link, the
      // pause toggle), and a button may not contain interactive elements
      "aria-current": state === "current" ? "step" : null,
      title: `stage 0${s.no}: ${s.title}`,
    },
      h("div", { class: "dsh-stage-no" }, `0${s.no}`),
      h("div", { class: "dsh-stage-title" }, s.title),
      h("div", { class: "dsh-stage-value", title: value(s.no, d) }, softBreaks(value(s.no, d))),
      h("div", { class: "dsh-stage-roles" }, ...roles.map((r) => h("span", { class: `dsh-dot dsh-role-${r}`, title: r }))),
      link,
      d.breakToggle ? d.breakToggle(s.no) : null,
    );
    box.addEventListener("click", () => cb.onStage(s.no));
    onActivate(box, () => cb.onStage(s.no)); // Space and Enter; arrows rove (ui/diagram-frame.ts)
    row.append(box);
    if (s.no < 6) row.append(h("li", { class: `dsh-arrow ${d.stage > s.no ? "dsh-arrow-done" : ""}`, "aria-hidden": "true" }, "→"));
  }
  return withReturnArc(row, d.stage);
}

const PHASES = ["prepare", "policy", "approval", "execute", "result"];
const SHOW_DETAIL = new Set(["error", "deny", "allow", "cancelled"]);

function phaseLabel(ph: string, st: string | undefined, detail: unknown): string {
  if (!st) return ph;
  if (ph === "approval" && st === "waiting") return "waiting for approval";
  const d = typeof detail === "string" && detail && ph !== "policy" && SHOW_DETAIL.has(st) ? ` (${short(detail, 40)})` : "";
  return `${ph} · ${st}${d}`;
}

/** Stage 03 detail: the runtime phases as they happened (live frames), with approval waiting.
 *  Phases re-derived from the log (`runtime.derived`) look quieter and say where they come from. */
export function renderPhases(runtime: ToolRuntimeState | undefined, hadApproval: boolean): HTMLElement {
  const seen = new Map<string, ToolPhase>();
  let progress = 0;
  for (const p of runtime?.phases ?? []) {
    if (p.phase === "progress") { progress += 1; continue; }
    seen.set(p.phase, p);
  }
  const derived = runtime?.derived;
  const list = h("ol", { class: `dsh-phases${derived ? " dsh-phases-derived" : ""}`, "data-origin": derived ? "log" : "live" });
  for (const ph of PHASES) {
    if (ph === "approval" && !seen.has("approval") && !hadApproval) continue;
    const p = seen.get(ph);
    const st = p?.status;
    const title = derived && p ? `from the log: event #${p.seq ?? "?"} (${DERIVED_NOTE})` : derived ? `not reached in the log yet (${DERIVED_NOTE})` : null;
    list.append(h("li", {
      class: `dsh-phase ${st ? `dsh-phase-${st}` : "dsh-phase-todo"}${derived && p ? " dsh-phase-derived" : ""}`,
      "data-phase": ph,
      "data-seq": p?.seq ?? null,
      title,
    }, phaseLabel(ph, st, p?.detail)));
  }
  if (progress) list.append(h("li", { class: "dsh-phase dsh-phase-progress" }, `${progress} progress frame${progress > 1 ? "s" : ""} (view only)`));
  if (derived) {
    const span = derived.resultSeq !== undefined
      ? `tool/call #${derived.callSeq} → tool/result #${derived.resultSeq} · ${fmtMs(derived.elapsedMs ?? 0)}`
      : `tool/call #${derived.callSeq} → tool/result not reached yet`;
    list.append(h("li", { class: "dsh-phase-origin", title: `No live tool-runtime frames for this call: ${DERIVED_NOTE} (event times).` }, `from the log · ${span}`));
  }
  return list;
}
