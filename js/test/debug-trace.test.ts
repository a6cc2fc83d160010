// What a debugger edit does to the replayed loop: an arguments edit at 02–03 (a debug/edit, then
// the assistant message replaced by a copy with the edited arguments) stays one call, and the
// explanations of 02, 03 and 06 say what was edited — the log shape of a real edited run.
import { describe, expect, it } from "vitest";
import { explainStage, requestEdits } from "../src/model/explain";
import { playbackSteps, traceToolCalls } from "../src/model/stages";
import type { SessionEvent } from "../src/types";
import { call, log, toolMsg, user } from "./helpers";

const README = '{"file_path": "README.md"}';
const MATH = '{"file_path": "src/math.ts"}';
const assistant = (args: string) => ({ role: "assistant" as const, content: [{ type: "text" as const, text: "I'll read README.md first." }, call("c1", "read", args)] });

/** seqs: 0 turn/start · 1 user · 2 request/frozen · 3 assistant · 4 tool/call · 5 debug/edit ·
 *  6 assistant (replace 3..3) · 7 tool/result · 8 step/start · 9 request/frozen · [10 debug/edit request] · 11 assistant */
function editedRun(requestEdit: boolean): SessionEvent[] {
  const after = [{ role: "user", content: [{ type: "text", text: "hi MARKER" }] }];
  return log(
    { type: "turn/start", turn: 1 },
    { type: "user/message", turn: 1, message: user("Read README.md") },
    { type: "request/frozen", turn: 1, step: 1, attempt: 1, provider: "script", model: "readme", messageSeqs: [1] },
    { type: "assistant/message", turn: 1, step: 1, message: assistant(README) },
    { type: "tool/call", turn: 1, step: 1, callId: "c1", name: "read", arguments: README },
    { type: "debug/edit", stage: "03", target: "arguments", callId: "c1", before: README, after: MATH, by: "widget", sourceEventSeqs: [4] },
    { type: "assistant/message", turn: 1, step: 1, message: assistant(MATH), surfaceOp: { op: "replace", startSeq: 3, endSeq: 3 }, sourceEventSeqs: [3, 5] },
    { type: "tool/result", turn: 1, step: 1, message: toolMsg("c1", "1\t// Arithmetic helpers"), sourceEventSeqs: [4, 5] },
    { type: "step/start", turn: 1, step: 2 },
    { type: "request/frozen", turn: 1, step: 2, attempt: 1, provider: "script", model: "readme", messageSeqs: [1, 6, 7] },
    requestEdit
      ? { type: "debug/edit", stage: "06", target: "request", before: [], after, by: "widget", sourceEventSeqs: [9] }
      : { type: "step/end", turn: 1, step: 1 },
    { type: "assistant/message", turn: 1, step: 2, message: { role: "assistant", content: [{ type: "text", text: "done" }] } },
  );
}

describe("the replay of a run edited in the debugger", () => {
  it("an arguments edit stays one call, with the edited arguments and what the model asked", () => {
    const events = editedRun(false);
    const traces = traceToolCalls(events);
    expect(traces).toHaveLength(1); // the replacement message is not a second (ghost) call
    const [t] = traces;
    expect(t).toMatchObject({ callId: "c1", arguments: MATH, modelArguments: README, argumentEdits: [5], assistantSeq: 3, callSeq: 4, resultSeq: 7 });
    expect(playbackSteps(traces, events).map((s) => s.stage)).toEqual([1, 2, 3, 4, 5, 6]);
    const two = explainStage(t, 2, events).text;
    expect(two).toContain(`Its arguments were edited while paused (debug/edit #5): the tool runs with ${MATH}; the model asked for ${README}.`);
    const three = explainStage(t, 3, events).text;
    expect(three).toContain(`runs read(${MATH})`);
    expect(three).toContain(`(debug/edit #5); the model asked for ${README}.`);
    expect(explainStage(t, 6, events).text).not.toContain("edited");
  });

  it("a call nobody edited says nothing about edits", () => {
    const events = editedRun(false).filter((e) => e.type !== "debug/edit" && !("surfaceOp" in e && e.surfaceOp));
    const [t] = traceToolCalls(events);
    expect(t.argumentEdits).toBeUndefined();
    expect(explainStage(t, 2, events).text).not.toContain("edited");
  });

  it("a request edit at 06 is found right after its frozen request and explained at 06", () => {
    const events = editedRun(true);
    expect(requestEdits(events, 9)).toEqual([10]);
    expect(requestEdits(events, 2)).toEqual([]); // the first request was not edited
    expect(requestEdits(events, undefined)).toEqual([]);
    const [t] = traceToolCalls(events);
    expect(t.frozenSeq).toBe(9);
    expect(explainStage(t, 6, events).text).toContain("Its messages were edited while paused (debug/edit #10): the model got the edited messages");
  });
});
