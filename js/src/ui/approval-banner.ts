// The approval banner of the widget header: every call the agent waits on now (the run's real
// state, not the animated stage), with the full command or the edit as a diff, and the buttons.
import { approvalDetail, waitingKey, type ApprovalDetail, type WaitingApproval } from "../model/approval";
import { h, replace } from "./dom";

export type Decide = (callId: string, decision: "allow" | "deny", scope: "call" | "session") => Promise<unknown> | void;

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

function itemEl(w: WaitingApproval, decide: Decide): HTMLElement {
  const btn = (cls: string, label: string, title: string, fn: () => Promise<unknown> | void) => {
    const b = h("button", { class: `dsh-btn ${cls}`, type: "button", "data-call-id": w.callId, title }, label);
    // disabled while the decision travels; enabled again if it failed (the banner stays)
    b.addEventListener("click", () => { b.disabled = true; void Promise.resolve(fn()).catch(() => undefined).finally(() => { b.disabled = false; }); });
    return b;
  };
  return h("div", { class: "dsh-approval-item", "data-call-id": w.callId },
    h("div", { class: "dsh-approval-title" }, `The agent waits for your approval: ${w.name} · ${w.callId}${w.reason ? ` — ${w.reason}` : ""}`),
    detailEl(approvalDetail(w.name, w.arguments)),
    h("div", { class: "dsh-approval-buttons" },
      btn("dsh-allow", "Allow", "allow this call", () => decide(w.callId, "allow", "call")),
      btn("dsh-deny", "Deny", "deny this call", () => decide(w.callId, "deny", "call")),
      btn("dsh-allow-session", "Allow for this session", "allow this tool (for bash: a read-only command name, else this exact command) for the rest of the session",
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
