// The responsibilities view: model, agent, tool runtime, session; the active ones lit.
import { ROLES, STAGE_ROLES, roleLines } from "../model/explain";
import { decisionText } from "../model/mode";
import type { StageNo, ToolCallTrace } from "../model/stages";
import type { SessionEvent } from "../types";
import { h, replace } from "./dom";
import type { View } from "./view";

/** The responsibilities view; a decided call names its decision — allow / deny, by rule, grant,
 *  mode or user, in which permission mode — as the row "Decided" (issue 36). */
export function renderRoles(call: ToolCallTrace | undefined, stage: StageNo | 0, events: readonly SessionEvent[] = [], mode?: string): HTMLElement {
  const active = new Set(stage ? STAGE_ROLES[stage] : []);
  const lines = roleLines(call, stage, events);
  const wrap = h("div", { class: "dsh-view-roles dsh-roles" },
    h("p", { class: "dsh-muted" }, "Colours mark who owns each piece of data and each step."));
  for (const r of ROLES) {
    wrap.append(h("div", { class: `dsh-role dsh-role-${r.role} ${active.has(r.role) ? "dsh-role-active" : ""}`, "data-role": r.role },
      h("span", { class: `dsh-dot dsh-role-${r.role}` }),
      h("strong", null, r.label),
      h("span", { class: "dsh-role-line" }, lines[r.role])));
  }
  const ev = call?.decisionSeq !== undefined && (stage === 0 || stage >= 3) ? events[call.decisionSeq] : undefined;
  wrap.append(h("div", { class: `dsh-role dsh-role-decision${mode === "bypass" ? " dsh-mode-bypass" : ""}`, "data-role": "decision" },
    h("span", { class: "dsh-dot" }),
    h("strong", null, "Decided"),
    h("span", { class: "dsh-role-line dsh-decision-line" }, ev && ev.type === "approval/decided"
      ? `${decisionText(ev)} (approval/decided #${ev.seq})`
      : `not yet — the permission mode${mode ? ` (${mode})` : ""} decides at stage 03, before the tool runs`)));
  return wrap;
}

/** The responsibilities view as a row of the views table: the call as shown (masked while a
 *  question asks for its arguments) and the session's permission mode. */
export function rolesView(): View {
  return { render: (panel, v) => replace(panel, renderRoles(v.shownCall, v.stage, v.events, v.sessionMode)) };
}
