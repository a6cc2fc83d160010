// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { ClientSessionModel } from "../src/fold";
import { deriveRuntime, runtimeView } from "../src/model/runtime-log";
import { fmtMs } from "../src/ui/dom";
import { playbackSteps, traceToolCalls } from "../src/model/stages";
import type { FollowItem } from "../src/types";
import { renderPhases } from "../src/ui/diagram";
import { call, eventsOf, log, readmeRun, toolMsg } from "./helpers";

const chips = (rt: ReturnType<typeof deriveRuntime>) => (rt?.phases ?? []).map((p) => `${p.phase}:${p.status}@${p.seq}`);

/** A hand-made turn: `w` asks, is allowed by the user and times out; `d` asks and is denied;
 *  `x` has invalid arguments (never reaches the policy). */
function approvalLog() {
  return log(
    { type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [call("w", "bash", '{"command":"sleep 9"}'), call("d", "write", "{}"), call("x", "edit", "[]")] } },
    { type: "tool/call", turn: 1, step: 1, callId: "w", name: "bash", arguments: '{"command":"sleep 9"}', time: 5_000 },
    { type: "approval/asked", callId: "w", name: "bash", reason: "bash asks", approver: "host", time: 5_010 },
    { type: "approval/decided", callId: "w", name: "bash", decision: "allow", by: "user", time: 7_000 },
    { type: "tool/result", turn: 1, step: 1, sourceEventSeqs: [1], message: toolMsg("w", "timed out", true), error: { name: "bash", code: "TIMED_OUT" }, time: 9_500 },
    { type: "tool/call", turn: 1, step: 1, callId: "d", name: "write", arguments: "{}", time: 9_600 },
    { type: "approval/asked", callId: "d", name: "write", time: 9_610 },
    { type: "approval/decided", callId: "d", name: "write", decision: "deny", by: "user", time: 9_900 },
    { type: "tool/result", turn: 1, step: 1, sourceEventSeqs: [5], message: toolMsg("d", "permission denied", true), error: { name: "write", code: "DENIED" }, time: 9_901 },
    { type: "tool/call", turn: 1, step: 1, callId: "x", name: "edit", arguments: "[]", time: 9_950 },
    { type: "tool/result", turn: 1, step: 1, sourceEventSeqs: [9], message: toolMsg("x", "invalid", true), error: { name: "edit", code: "INVALID_ARGS" }, time: 9_952 },
  );
}

describe("stage 03 re-derived from the log", () => {
  it("the real readme run: tool/call → tool/result gives every phase and the elapsed time", () => {
    const events = eventsOf(readmeRun());
    const [t] = traceToolCalls(events);
    const rt = deriveRuntime(events, t);
    expect(chips(rt)).toEqual(["prepare:start@10", "prepare:done@11", "policy:allow@11", "execute:done@11", "result:done@11"]);
    expect(rt?.derived).toEqual({ callSeq: 10, resultSeq: 11, elapsedMs: events[11].time - events[10].time });
    expect(rt?.derived?.elapsedMs).toBe(1);
    expect(rt?.waiting).toBe(false);
    // at the tool/call only the prepare start is proven; before it, nothing
    const at10 = deriveRuntime(events, t, 10);
    expect(chips(at10)).toEqual(["prepare:start@10"]);
    expect(at10?.derived?.resultSeq).toBeUndefined();
    expect(deriveRuntime(events, t, 9)).toBeUndefined();
  });

  it("live frames win; without them (a snapshot of the saved log) the log's phases are used", () => {
    const items = readmeRun();
    const live = new ClientSessionModel();
    live.applyAll(items);
    const events = live.events;
    const [t] = traceToolCalls(events);
    const fromLive = runtimeView(live.tools["c1"], events, t, 11);
    expect(fromLive?.derived).toBeUndefined();
    expect(fromLive?.phases.map((p) => p.phase)).toEqual(["prepare", "prepare", "policy", "execute", "execute", "result"]);

    const replay = new ClientSessionModel();
    const snap = { type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events: eventsOf(items) } as unknown as FollowItem;
    replay.applyAll([snap]);
    expect(replay.tools.c1.phases).toHaveLength(0); // the durable call, no live phases
    const fromLog = runtimeView(replay.tools["c1"], replay.events, t, 11);
    expect(fromLog?.derived?.resultSeq).toBe(11);
    // a progress-only live state (a follow that began mid-call) is not enough to win
    const progressOnly = { callId: "c1", name: "read", waiting: false, phases: [{ phase: "progress" as const, status: "start" as const, detail: null, time: null }] };
    expect(runtimeView(progressOnly, replay.events, t, 11)?.derived).toBeDefined();
  });

  it("approval asked → decided (with by) and an error result, revealed by position", () => {
    const events = approvalLog();
    const [w, d, x] = traceToolCalls(events);
    expect(chips(deriveRuntime(events, w, 1))).toEqual(["prepare:start@1"]);
    const asked = deriveRuntime(events, w, 2);
    expect(chips(asked)).toEqual(["prepare:start@1", "prepare:done@2", "policy:ask@2", "approval:waiting@2"]);
    expect(asked?.waiting).toBe(true);
    const decided = deriveRuntime(events, w, 3);
    expect(decided?.waiting).toBe(false);
    expect(decided?.phases[4]).toMatchObject({ phase: "approval", status: "allow", detail: "by user", time: 7_000 });
    const done = deriveRuntime(events, w);
    expect(chips(done).slice(5)).toEqual(["execute:error@4", "result:error@4"]);
    expect(done?.phases.find((p) => p.phase === "execute")?.detail).toBe("TIMED_OUT");
    expect(done?.derived?.elapsedMs).toBe(4_500);
    // denied at the approval: the body never ran
    expect(chips(deriveRuntime(events, d))).toEqual(["prepare:start@5", "prepare:done@6", "policy:ask@6", "approval:waiting@6", "approval:deny@7", "result:error@8"]);
    // invalid arguments: prepare fails, nothing else ran
    expect(chips(deriveRuntime(events, x))).toEqual(["prepare:start@9", "prepare:error@10", "result:error@10"]);
    // playback: one stage-03 step per approval event, so asked and decided appear one after the other
    const steps = playbackSteps([w], events).filter((s) => s.stage === 3);
    expect(steps.map((s) => s.seq)).toEqual([2, 3]);
  });

  it("renders derived chips quieter, with where they come from and the elapsed time", () => {
    const events = approvalLog();
    const [w] = traceToolCalls(events);
    const waiting = renderPhases(deriveRuntime(events, w, 2), true);
    expect(waiting.getAttribute("data-origin")).toBe("log");
    expect(waiting.querySelector('[data-phase="approval"]')?.textContent).toBe("waiting for approval");
    expect(waiting.querySelector('[data-phase="execute"]')?.className).toContain("dsh-phase-todo");
    expect(waiting.querySelector(".dsh-phase-origin")?.textContent).toBe("from the log · tool/call #1 → tool/result not reached yet");
    const el = renderPhases(deriveRuntime(events, w), true);
    const labels = [...el.querySelectorAll(".dsh-phase")].map((c) => c.textContent);
    expect(labels).toEqual(["prepare · done", "policy · ask", "approval · allow (by user)", "execute · error (TIMED_OUT)", "result · error (TIMED_OUT)"]);
    expect(el.querySelectorAll(".dsh-phase-derived")).toHaveLength(5);
    expect(el.querySelector('[data-phase="execute"]')?.getAttribute("title")).toContain("re-derived from tool/call → tool/result");
    expect(el.querySelector(".dsh-phase-origin")?.textContent).toBe("from the log · tool/call #1 → tool/result #4 · 4.50 s");
    // live frames render as before: no origin line, no derived marks
    const live = renderPhases({ callId: "w", name: "bash", waiting: false, phases: [{ phase: "execute", status: "start", detail: null, time: null }] }, false);
    expect(live.getAttribute("data-origin")).toBe("live");
    expect(live.querySelector(".dsh-phase-origin")).toBeNull();
    expect([fmtMs(1), fmtMs(2340), fmtMs(12_500), fmtMs(184_000)]).toEqual(["1 ms", "2.34 s", "12.5 s", "3 min 4 s"]);
  });
});
