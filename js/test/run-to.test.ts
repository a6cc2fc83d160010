// @vitest-environment jsdom
// "Run to…": the call choices, and the line when the turn ends before the target (DebugPanel alone).
import { describe, expect, it } from "vitest";
import { callChoices, runToArgs } from "../src/model/debug";
import { DebugPanel } from "../src/ui/debug-bar";
import type { DebugArgs, DebugState } from "../src/wire.gen";

describe("run to stage N of call cK", () => {
  it("lists the running turn's calls as cK (the id when it differs) and the next few", () => {
    const traces = [{ callId: "c1", name: "bash", turn: 1 }, { callId: "call_9", name: "read", turn: 2 }, { callId: "call_a", name: "edit", turn: 2 }];
    expect(callChoices(traces, 2, 2).map((c) => c.label)).toEqual(["c1 · read (call_9)", "c2 · edit (call_a)", "c3 · not made yet", "c4 · not made yet"]);
    expect(callChoices(traces, 2, 0).map((c) => c.value)).toEqual(["c1", "c2"]);
    expect(callChoices(traces, null, 2).map((c) => c.label)).toEqual(["c1 · next turn", "c2 · next turn"]);
    expect(runToArgs("s", "05", "c3")).toEqual({ sessionId: "s", action: "run-to", stage: "05", call: "c3" });
  });

  it("when the turn ends first, says the host's reason once; a target for the next turn waits", async () => {
    const sent: DebugArgs[] = [];
    let state: Partial<DebugState> = { runTo: { stage: "02", call: "c7" } };
    const panel = new DebugPanel({
      sessionId: () => "s1", cancel: async () => undefined, changed: () => undefined,
      debug: async (a) => { sent.push(a); return { sessionId: "s1", ...state } as DebugState; },
      calls: () => [], turn: () => null,
    }, false);
    document.body.append(panel.el);
    (panel.el.querySelector(".dsh-debug-runto") as HTMLButtonElement).click();
    (panel.el.querySelector(".dsh-debug-runto-call") as HTMLSelectElement).value = "c2";
    (panel.el.querySelector(".dsh-debug-runto-go") as HTMLButtonElement).click();
    await new Promise((r) => setTimeout(r, 0));
    const status = panel.el.querySelector(".dsh-debug-status") as HTMLElement;
    expect(status.textContent).toBe("running to stage 01 of c2 — other breakpoints still pause on the way");
    panel.settle("idle"); // idle before the turn: nothing asked
    panel.settle("running");
    state = { runTo: null, runToMissed: "the turn ended before stage 01 of c2 (1 tool call made)" };
    panel.settle("idle");
    await new Promise((r) => setTimeout(r, 0));
    expect(sent.map((a) => a.action)).toEqual(["run-to", "state"]);
    expect(status.textContent).toBe("run to stage 01 of c2: not reached — the turn ended before stage 01 of c2 (1 tool call made)");
    expect(status.classList.contains("dsh-debug-status-err")).toBe(true);
    panel.settle("running"); panel.settle("idle"); // said once
    expect(sent.length).toBe(2);
  });
});
