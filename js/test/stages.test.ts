import { describe, expect, it } from "vitest";
import { explainStage, roleLines } from "../src/model/explain";
import { playbackSteps, stageAt, stageSeq, traceToolCalls } from "../src/model/stages";
import { call, eventsOf, log, readmeRun, toolMsg, user } from "./helpers";

describe("stage derivation (DESIGN §5)", () => {
  it("marks all six stages of the real readme run", () => {
    const events = eventsOf(readmeRun());
    const [t] = traceToolCalls(events);
    expect(t).toMatchObject({ callId: "c1", name: "read", assistantSeq: 9, callSeq: 10, resultSeq: 11, deriveSeq: 13, frozenSeq: 14 });
    // request/frozen #14 has baseRequestSeq 8 and messageSeqs [9, 11]: it extends #8's
    expect(stageAt(t, 8)).toBe(0);
    expect(stageAt(t, 9)).toBe(1);
    expect(stageAt(t, 10)).toBe(2);
    expect(stageAt(t, 10, true)).toBe(3);
    expect(stageAt(t, 11)).toBe(4);
    expect(stageAt(t, 12)).toBe(4);
    expect(stageAt(t, 13)).toBe(5);
    expect(stageAt(t, 14)).toBe(6);
  });

  it("explains each stage with the session's real values", () => {
    const events = eventsOf(readmeRun());
    const [t] = traceToolCalls(events);
    expect(explainStage(t, 1, events).text).toContain("assistant/message #9");
    expect(explainStage(t, 1, events).text).toContain('{"file_path": "README.md"}');
    expect(explainStage(t, 2, events).text).toContain("tool/call #10");
    expect(explainStage(t, 4, events).text).toContain("sourceEventSeqs: [10]");
    expect(explainStage(t, 5, events).text).toContain("derive_messages()");
    expect(explainStage(t, 6, events).text).toMatch(/request\/frozen #14 froze 5 messages .*adapter\.stream\(\) on script:auto/);
    const roles = roleLines(t, 4);
    expect(roles.session).toContain("tool/result");
    expect(roles.agent).toContain("execute_tool_calls()");
  });

  it("playback steps follow the stages with recorded times", () => {
    const events = eventsOf(readmeRun());
    const steps = playbackSteps(traceToolCalls(events), events);
    expect(steps.map((s) => s.stage)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(steps.map((s) => s.seq)).toEqual([9, 10, 10, 11, 13, 14]);
    for (let i = 1; i < steps.length; i++) expect(steps[i].time).toBeGreaterThanOrEqual(steps[i - 1].time);
  });

  it("parallel calls: results committed in call order each cite their own call; one request carries both", () => {
    const events = log(
      { type: "turn/start", turn: 1 },
      { type: "step/start", turn: 1, step: 1 },
      { type: "user/message", turn: 1, message: user("go") },
      { type: "request/frozen", turn: 1, step: 1, attempt: 1, provider: "p", model: "m", messageSeqs: [2] },
      { type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [call("a", "read"), call("b", "bash", '{"command":"ls"}')] } },
      { type: "tool/call", turn: 1, step: 1, callId: "a", name: "read", arguments: "{}" },
      { type: "tool/call", turn: 1, step: 1, callId: "b", name: "bash", arguments: "{}" },
      { type: "approval/asked", callId: "b", name: "bash" },
      { type: "approval/decided", callId: "b", name: "bash", decision: "allow" },
      { type: "tool/result", turn: 1, step: 1, message: toolMsg("a", "A"), sourceEventSeqs: [5] },
      { type: "tool/result", turn: 1, step: 1, message: toolMsg("b", "B"), sourceEventSeqs: [6] },
      { type: "step/end", turn: 1, step: 1 },
      { type: "step/start", turn: 1, step: 2 },
      { type: "request/frozen", turn: 1, step: 2, attempt: 1, provider: "p", model: "m", messageSeqs: [2, 4, 9, 10] },
    );
    const [a, b] = traceToolCalls(events);
    expect([a.callSeq, a.resultSeq, b.callSeq, b.resultSeq]).toEqual([5, 9, 6, 10]);
    expect(b.approvalSeqs).toEqual([7, 8]);
    expect(stageSeq(b, 3)).toBe(8);
    expect([a.deriveSeq, a.frozenSeq, b.deriveSeq, b.frozenSeq]).toEqual([12, 13, 12, 13]);
    expect(stageAt(b, 7)).toBe(3); // waiting for approval is still the runtime's stage
  });

  it("a synthetic call (aborted before dispatch) without an assistant event still traces", () => {
    const events = log(
      { type: "tool/call", turn: 1, step: 1, callId: "z", name: "write", arguments: "{}" },
      { type: "tool/result", turn: 1, step: 1, message: toolMsg("z", "aborted", true), sourceEventSeqs: [0], error: { name: "write", code: "ABORTED_BEFORE_DISPATCH" } },
      { type: "turn/end", turn: 1, reason: { kind: "aborted" } },
    );
    const [t] = traceToolCalls(events);
    expect(t).toMatchObject({ callId: "z", callSeq: 0, resultSeq: 1, isError: true, errorCode: "ABORTED_BEFORE_DISPATCH" });
    expect(t.frozenSeq).toBeUndefined();
    expect(stageAt(t, 2)).toBe(4);
    expect(explainStage(t, 4, events).text).toContain("ABORTED_BEFORE_DISPATCH");
  });
});
