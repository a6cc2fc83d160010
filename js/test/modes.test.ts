// @vitest-environment jsdom
// Permission modes in the widgets (issue 36): the mode read from the log, each call's decision
// (policy step, not an approval step), the plan's approval banner and the header's selector.
import { describe, expect, it, vi } from "vitest";
import { payloadCards } from "../src/model/cards";
import { decisionText, isDemoCopy, ModeFold } from "../src/model/mode";
import { deriveRuntime } from "../src/model/runtime-log";
import { stageSeq, traceToolCalls } from "../src/model/stages";
import { summarize } from "../src/model/summary";
import { createApprovalBanner } from "../src/ui/approval-banner";
import { createModeControl } from "../src/ui/mode-select";
import { renderRoles } from "../src/ui/roles-view";
import { call, log, toolMsg } from "./helpers";

/** `r` read (decided by the mode, no ask), `w` write (asked, allowed by the user), then the
 *  session's mode changes to plan. */
function modeLog() {
  return log(
    { type: "mode/changed", mode: "accept-edits", previous: "default", by: "notebook", time: 900 },
    { type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [call("r", "read", '{"file_path":"a"}'), call("w", "bash", '{"command":"touch x"}')] } },
    { type: "tool/call", turn: 1, step: 1, callId: "r", name: "read", arguments: '{"file_path":"a"}', time: 1_000 },
    { type: "approval/decided", callId: "r", name: "read", decision: "allow", by: "mode", mode: "accept-edits", decider: "mode", time: 1_001 },
    { type: "tool/result", turn: 1, step: 1, sourceEventSeqs: [2], message: toolMsg("r", "1\ta"), time: 1_005 },
    { type: "tool/call", turn: 1, step: 1, callId: "w", name: "bash", arguments: '{"command":"touch x"}', time: 1_010 },
    { type: "approval/asked", callId: "w", name: "bash", approver: "host", mode: "accept-edits", decider: "mode", time: 1_011 },
    { type: "approval/decided", callId: "w", name: "bash", decision: "allow", by: "host:widget", mode: "accept-edits", decider: "user", time: 2_000 },
    { type: "tool/result", turn: 1, step: 1, sourceEventSeqs: [5], message: toolMsg("w", "[exit code: 0]"), time: 2_100 },
    { type: "mode/changed", mode: "plan", previous: "accept-edits", by: "widget", time: 3_000 },
  );
}

describe("the mode and each call's decision, from the log", () => {
  it("folds the mode: the last mode/changed, else what the workspace implies", () => {
    const events = modeLog();
    const fold = new ModeFold();
    expect(fold.update(events.slice(0, 1), "/home/me/p")).toBe("accept-edits");
    expect(fold.update(events, "/home/me/p")).toBe("plan");
    expect(new ModeFold().update([], "/tmp/dsh-demo-x1/demo")).toBe("auto");
    expect(new ModeFold().update([], "/home/me/p")).toBe("default");
    expect([isDemoCopy("/tmp/dsh-demo-abc/demo/"), isDemoCopy("/tmp/demo")]).toEqual([true, false]);
  });

  it("folds a window by seq: a trimmed or later-starting window folds each event once; before it, the log's mode", () => {
    const events = modeLog();
    const fold = new ModeFold();
    expect(fold.update(events.slice(0, 3), "/home/me/p")).toBe("accept-edits");
    // the widget trims its window to the last two events and more arrive: the mode/changed held
    // before the trim still counts, the one arriving after it is folded once
    expect(fold.update([...events.slice(1, 3)], "/home/me/p")).toBe("accept-edits");
    expect(fold.update(events.slice(3), "/home/me/p")).toBe("plan");
    // a window that starts after the session's last mode/changed: the kernel's facets say the mode
    const late = new ModeFold();
    expect(late.update(events.slice(2, -1), "/home/me/p", "accept-edits")).toBe("accept-edits");
    expect(late.update(events.slice(2, -1), "/home/me/p", null)).toBe("default");
    expect(late.update(events.slice(2), "/home/me/p", "accept-edits")).toBe("plan"); // the window's own change wins
  });

  it("a decision without an ask is the policy's step, not an approval; both say mode and decider", () => {
    const events = modeLog();
    const [r, w] = traceToolCalls(events);
    expect([r.policySeq, r.approvalSeqs, r.decisionSeq]).toEqual([3, [], 3]);
    expect([w.policySeq, w.approvalSeqs, w.decisionSeq]).toEqual([undefined, [6, 7], 7]);
    expect(stageSeq(r, 3)).toBe(3);
    const phases = (deriveRuntime(events, r)?.phases ?? []).map((p) => `${p.phase}:${p.status}`);
    expect(phases).toEqual(["prepare:start", "prepare:done", "policy:allow", "execute:done", "result:done"]);
    expect(deriveRuntime(events, r)?.phases[2].detail).toBe("allow by mode · mode accept-edits");
    expect(decisionText(events[7])).toBe("allow by user · mode accept-edits");
    expect(payloadCards(events, r, 10).map((c) => c.type)).toEqual(["assistant/message", "tool/call", "approval/decided", "tool/result", "request/frozen"]);
    expect(summarize(events[3])).toBe("read r → allow by mode · mode accept-edits");
    expect(summarize(events[7])).toBe("bash w → allow by user (host:widget) · mode accept-edits");
    expect(summarize(events[9])).toBe("accept-edits → plan by widget");
    const roles = renderRoles(w, 4, events, "plan");
    expect(roles.querySelector(".dsh-decision-line")?.textContent).toBe("allow by user · mode accept-edits (approval/decided #7)");
    expect(renderRoles(undefined, 0, [], "bypass").querySelector(".dsh-role-decision")?.classList.contains("dsh-mode-bypass")).toBe(true);
  });
});

describe("the plan's approval in the banner", () => {
  it("shows the plan, asks which mode the work continues in, or keeps planning with feedback", async () => {
    const decide = vi.fn(() => Promise.resolve());
    const banner = createApprovalBanner(decide);
    document.body.append(banner.el);
    banner.update([{ callId: "p1", name: "exit_plan_mode", reason: null, arguments: JSON.stringify({ plan: "1. edit a\n2. rm \u202e b" }) },
      { callId: "n1", name: "notebook_insert", reason: null, arguments: '{"code":"x"}' }]);
    expect(banner.el.querySelector(".dsh-plan-text")?.textContent).toBe("1. edit a\n2. rm \\u202e b"); // nothing hidden
    expect(banner.el.querySelectorAll(".dsh-allow-session")).toHaveLength(0); // neither is ever granted for the session
    const feedback = banner.el.querySelector<HTMLTextAreaElement>(".dsh-plan-feedback");
    expect(feedback?.labels?.[0]?.textContent).toBe("Feedback");
    const press = async (cls: string) => { banner.el.querySelector<HTMLButtonElement>(cls)?.click(); await new Promise((r) => setTimeout(r, 0)); };
    await press(".dsh-plan-keep");
    (feedback as HTMLTextAreaElement).value = "  add a test  ";
    await press(".dsh-plan-keep");
    await press(".dsh-plan-accept-edits");
    await press(".dsh-plan-default");
    expect(decide.mock.calls).toEqual([["p1", "deny", "call", {}], ["p1", "deny", "call", { feedback: "add a test" }],
      ["p1", "allow", "call", { mode: "accept-edits" }], ["p1", "allow", "call", { mode: "default" }]]);
    banner.el.remove();
  });
});

describe("the header's mode selector", () => {
  it("is labelled, shows the logged mode, sends each change in order and shows the log's mode again on a refusal", async () => {
    const sent: string[] = [];
    const errors: string[] = [];
    const ctl = createModeControl((m) => { sent.push(m); return m === "bypass" ? Promise.reject({ code: "BYPASS_NOT_ARMED", message: "arm it" }) : Promise.resolve(); },
      (e) => errors.push(e));
    document.body.append(ctl.el);
    const select = ctl.el.querySelector("select") as HTMLSelectElement;
    expect(select.getAttribute("aria-label")).toBe("permission mode");
    ctl.update("default", true);
    expect(select.value).toBe("default");
    const pick = (v: string) => { select.value = v; select.dispatchEvent(new Event("change")); };
    pick("accept-edits");
    pick("plan");
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual(["accept-edits", "plan"]);
    ctl.update("plan", true);
    pick("bypass");
    expect(ctl.el.classList.contains("dsh-mode-bypass")).toBe(true);
    await new Promise((r) => setTimeout(r, 0));
    expect(errors).toEqual(["BYPASS_NOT_ARMED: arm it"]);
    expect([select.value, ctl.el.dataset.mode, ctl.el.classList.contains("dsh-mode-bypass")]).toEqual(["plan", "plan", false]);
    ctl.update("auto", false); // a saved log's legacy mode: shown, not offered
    expect([select.value, (ctl.el.querySelector(".dsh-mode-badge") as HTMLElement).hidden]).toEqual(["auto", false]);
    ctl.el.remove();
  });

  it("before a session exists, the pick waits for the session the widget creates", () => {
    const set = vi.fn(() => Promise.resolve());
    const ctl = createModeControl(set, () => undefined);
    ctl.update(null, true);
    const select = ctl.el.querySelector("select") as HTMLSelectElement;
    select.value = "dont-ask";
    select.dispatchEvent(new Event("change"));
    expect([ctl.pending, set.mock.calls.length]).toEqual(["dont-ask", 0]);
  });
});
