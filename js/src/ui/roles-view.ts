// The responsibilities view: model, agent, tool runtime, session; the active ones lit.
import { ROLES, STAGE_ROLES, roleLines } from "../model/explain";
import type { StageNo, ToolCallTrace } from "../model/stages";
import { h } from "./dom";

export function renderRoles(call: ToolCallTrace | undefined, stage: StageNo | 0): HTMLElement {
  const active = new Set(stage ? STAGE_ROLES[stage] : []);
  const lines = roleLines(call, stage);
  const wrap = h("div", { class: "dsh-roles" },
    h("p", { class: "dsh-muted" }, "Colours mark who owns each piece of data and each step."));
  for (const r of ROLES) {
    wrap.append(h("div", { class: `dsh-role dsh-role-${r.role} ${active.has(r.role) ? "dsh-role-active" : ""}`, "data-role": r.role },
      h("span", { class: `dsh-dot dsh-role-${r.role}` }),
      h("strong", null, r.label),
      h("span", { class: "dsh-role-line" }, lines[r.role])));
  }
  return wrap;
}
