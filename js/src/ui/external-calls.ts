// The external agent's calls, drawn in its own colour (the fourth role, issue 41): one row per
// call — who (the MCP client), what (tool and arguments), how it was decided, and its result —
// live as the session's events arrive, beside the in-kernel agent's six stages.
import { externalCalls, type ExternalCallRow } from "../model/external";
import type { SessionEvent } from "../types";
import { h, replace } from "./dom";

const STATUS_TEXT: Record<ExternalCallRow["status"], string> = {
  running: "running", waiting: "waiting for your approval", done: "done", error: "failed", refused: "refused",
};

function rowEl(r: ExternalCallRow): HTMLElement {
  return h("li", { class: `dsh-ext-call dsh-ext-${r.status}`, "data-call-id": r.callId, "data-seq": String(r.seq),
    "data-tool": r.tool, "data-status": r.status },
    h("span", { class: "dsh-dot dsh-role-external", "aria-hidden": "true" }),
    h("strong", { class: "dsh-ext-tool" }, r.tool),
    h("span", { class: "dsh-ext-client", title: r.mcpSessionId ? `MCP session ${r.mcpSessionId}` : "" }, `by ${r.client}`),
    h("code", { class: "dsh-ext-summary" }, r.summary || "—"),
    h("span", { class: "dsh-ext-status" }, STATUS_TEXT[r.status]),
    r.decision ? h("span", { class: "dsh-ext-decision" }, r.decision) : null,
    h("span", { class: "dsh-ext-seq" }, `#${r.seq}${r.resultSeq !== null ? ` → #${r.resultSeq}` : ""}${r.turn !== null ? ` · turn ${r.turn}` : ""}`),
    r.result ? h("div", { class: "dsh-ext-result" }, r.result) : null);
}

/** A persistent element; `update()` redraws only when the rows changed. */
export function createExternalCalls(): { el: HTMLElement; update(events: readonly SessionEvent[], waiting: ReadonlySet<string>): void } {
  const list = h("ol", { class: "dsh-ext-list" });
  const count = h("span", { class: "dsh-ext-count" });
  const el = h("section", { class: "dsh-ext dsh-role-external", role: "region", "aria-label": "external agent calls", hidden: true },
    h("div", { class: "dsh-ext-head" },
      h("span", { class: "dsh-dot dsh-role-external", "aria-hidden": "true" }),
      h("strong", { class: "dsh-ext-title" }, "External agent"), count,
      h("span", { class: "dsh-ext-note" }, "calls over MCP from an agent outside Jupyter, recorded in this session")),
    list);
  let key = "";
  return {
    el,
    update(events, waiting) {
      const rows = externalCalls(events, waiting);
      const k = rows.map((r) => `${r.callId}:${r.status}:${r.resultSeq}:${r.decision}`).join("|");
      if (k === key) return;
      key = k;
      el.hidden = rows.length === 0;
      count.textContent = `${rows.length} call${rows.length === 1 ? "" : "s"}`;
      replace(list, ...rows.slice(-50).map(rowEl));
    },
  };
}
