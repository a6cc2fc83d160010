// The approval banner of the widget header: every call the agent waits on now (the run's real
// state, not the animated stage), with the full command or the edit as a diff, and the buttons.
// exit_plan_mode (plan mode, issue 36) shows the plan and asks which mode the work continues in —
// accept-edits or default — or to keep planning with feedback; notebook_insert is never granted
// "for this session" (a person decides each one, issue 37).
import { approvalDetail, visibleLines, waitingKey, type ApprovalDetail, type WaitingApproval } from "../model/approval";
import { h, replace } from "./dom";

export interface PlanAnswer { mode?: "accept-edits" | "default"; feedback?: string }
export type Decide = (callId: string, decision: "allow" | "deny", scope: "call" | "session", plan?: PlanAnswer) => Promise<unknown> | void;

/** The tools an "allow for this session" never covers. */
const NEVER_GRANTED = new Set(["notebook_insert", "exit_plan_mode"]);

function planOf(args: string): string {
  try {
    const v = JSON.parse(args) as { plan?: unknown };
    if (v && typeof v.plan === "string") return v.plan;
  } catch { /* shown as sent */ }
  return args;
}

function detailEl(d: ApprovalDetail): HTMLElement {
  switch (d.kind) {
    case "command":
      return h("pre", { class: "dsh-approval-command", "aria-label": "command" }, h("code", null, `$ ${d.command}`));
    case "edit":
    case "write":
      return h("div", { class: "dsh-approval-diff" },
        h("div", { class: "dsh-approval-path" }, `${d.kind === "edit" ? "edit" : "write"} ${d.path}${d.kind === "edit" && d.replaceAll ? " (every occurrence)" : ""}`),
        h("pre", { class: "dsh-adiff", "aria-label": "diff: old → new lines" }, ...d.lines.map((l) =>
          h("div", { class: `dsh-adiff-line dsh-adiff-${l.op === "-" ? "del" : l.op === "+" ? "add" : "ctx"}` }, `${l.op} ${l.text}`))));
    case "code":
      return h("pre", { class: "dsh-approval-command" }, h("code", null, d.code));
    case "args":
      return h("pre", { class: "dsh-approval-command" }, h("code", null, d.text));
  }
}

function button(w: WaitingApproval, cls: string, label: string, title: string, fn: () => Promise<unknown> | void): HTMLButtonElement {
  const b = h("button", { class: `dsh-btn ${cls}`, type: "button", "data-call-id": w.callId, title }, label) as HTMLButtonElement;
  // disabled while the decision travels; enabled again if it failed (the banner stays)
  b.addEventListener("click", () => { b.disabled = true; void Promise.resolve(fn()).catch(() => undefined).finally(() => { b.disabled = false; }); });
  return b;
}

function planItemEl(w: WaitingApproval, decide: Decide): HTMLElement {
  const feedbackId = `dsh-plan-feedback-${w.callId.replace(/[^\w-]/g, "_")}`;
  const feedback = h("textarea", { class: "dsh-plan-feedback", id: feedbackId, rows: 2, "data-call-id": w.callId,
    placeholder: "what to change in the plan (sent to the agent with Keep planning)" }) as HTMLTextAreaElement;
  return h("div", { class: "dsh-approval-item dsh-approval-plan", "data-call-id": w.callId, role: "group", "aria-label": "the agent's plan" },
    h("div", { class: "dsh-approval-title" }, `The agent presents its plan (${w.callId}): approve it to start the work, or keep planning`),
    h("pre", { class: "dsh-approval-command dsh-plan-text", "aria-label": "plan" }, visibleLines(planOf(w.arguments))),
    h("div", { class: "dsh-approval-buttons" },
      button(w, "dsh-allow dsh-plan-accept-edits", "Approve · continue in accept-edits",
        "approve the plan; from now on workspace edits run without asking (bash and python still ask)",
        () => decide(w.callId, "allow", "call", { mode: "accept-edits" })),
      button(w, "dsh-allow dsh-plan-default", "Approve · continue in default",
        "approve the plan; from now on writes, edits, bash and python ask",
        () => decide(w.callId, "allow", "call", { mode: "default" }))),
    h("label", { class: "dsh-plan-feedback-label", for: feedbackId }, "Feedback"),
    feedback,
    h("div", { class: "dsh-approval-buttons" },
      button(w, "dsh-deny dsh-plan-keep", "Keep planning", "send the plan back (with the feedback above); the session stays in plan mode",
        () => decide(w.callId, "deny", "call", feedback.value.trim() ? { feedback: feedback.value.trim() } : {}))));
}

function itemEl(w: WaitingApproval, decide: Decide): HTMLElement {
  if (w.name === "exit_plan_mode") return planItemEl(w, decide);
  const btn = (cls: string, label: string, title: string, fn: () => Promise<unknown> | void) => button(w, cls, label, title, fn);
  return h("div", { class: `dsh-approval-item${w.client ? " dsh-approval-external" : ""}`, "data-call-id": w.callId },
    h("div", { class: "dsh-approval-title" }, `${w.client ? `The external agent ${w.client} (over MCP)` : "The agent"} waits for your approval: ${w.name} · ${w.callId}${w.reason ? ` — ${w.reason}` : ""}`),
    detailEl(approvalDetail(w.name, w.arguments)),
    h("div", { class: "dsh-approval-buttons" },
      btn("dsh-allow", "Allow", "allow this call", () => decide(w.callId, "allow", "call")),
      btn("dsh-deny", "Deny", "deny this call", () => decide(w.callId, "deny", "call")),
      NEVER_GRANTED.has(w.name) ? null : btn("dsh-allow-session", "Allow for this session",
        "allow this tool (for bash: a read-only command name, else this exact command) for the rest of the session",
        () => decide(w.callId, "allow", "session"))));
}

/** A persistent element: `update()` rebuilds it only when what is waiting changes. */
export function createApprovalBanner(decide: Decide): { el: HTMLElement; update(list: readonly WaitingApproval[]): void } {
  const el = h("div", { class: "dsh-approval-banner", role: "region", "aria-label": "approvals", hidden: true });
  let key = "";
  return {
    el,
    update(list) {
      const k = waitingKey(list);
      if (k === key) return;
      key = k;
      el.hidden = list.length === 0;
      replace(el, ...list.map((w) => itemEl(w, decide)));
    },
  };
}
