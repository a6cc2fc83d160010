import { describe, expect, it } from "vitest";
import { deriveMessages, isWrapper, messagesOfSeqs, visibleHistory } from "../src/model/history";
import { buildProvenance } from "../src/model/provenance";
import { diffRequests, frozenRequests, resolveMessageSeqs } from "../src/model/diff";
import { payloadCards, stageNote } from "../src/model/cards";
import { traceToolCalls } from "../src/model/stages";
import { call, ctx, eventsOf, log, readmeRun, toolMsg, user } from "./helpers";

describe("message history projection", () => {
  it("derives only user/system/assistant/tool messages, at any seq", () => {
    const events = eventsOf(readmeRun());
    const all = deriveMessages(events);
    expect(all.map((d) => d.seq)).toEqual([4, 5, 6, 9, 11, 15]);
    expect(deriveMessages(events, 10).map((d) => d.seq)).toEqual([4, 5, 6, 9]);
    // the learner's view hides the system prompt and the runtime-context wrapper
    const shown = visibleHistory(all, false);
    expect(shown.map((d) => d.message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(visibleHistory(all, true)).toHaveLength(6);
    expect(all.filter((d) => isWrapper(d.message)).map((d) => d.seq)).toEqual([4, 6]);
  });

  it("applies replace surface ops and skips empty assistant messages", () => {
    const events = log(
      { type: "user/message", message: user("a") },
      { type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [] } },
      { type: "user/message", message: user("b") },
      { type: "user/message", message: user("summary"), surfaceOp: { op: "replace", startSeq: 0, endSeq: 2 }, sourceEventSeqs: [0, 1, 2] },
      { type: "user/message", message: ctx("ctx") },
    );
    expect(deriveMessages(events, 2).map((d) => d.seq)).toEqual([0, 2]);
    expect(deriveMessages(events).map((d) => d.seq)).toEqual([3, 4]);
    expect(messagesOfSeqs(events, [0, 1, 4]).map((d) => d.seq)).toEqual([0, 4]);
  });
});

describe("provenance", () => {
  it("links a tool/call to the result that cites it, both ways", () => {
    const events = eventsOf(readmeRun());
    const p = buildProvenance(events);
    expect(p.citing(10)).toEqual([11]);
    expect(p.cites(events[11])).toEqual([10]);
    expect(p.citing(9)).toEqual([]);
  });

  it("payload cards: committed vs not yet, and a jump target is added", () => {
    const events = eventsOf(readmeRun());
    const [t] = traceToolCalls(events);
    const at10 = payloadCards(events, t, 10);
    expect(at10.map((c) => [c.type, c.seq, c.committed])).toEqual([
      ["assistant/message", 9, true], ["tool/call", 10, true], ["tool/result", 11, false], ["request/frozen", 14, false]]);
    const withJump = payloadCards(events, t, 14, 5);
    expect(withJump[0]).toMatchObject({ seq: 5, type: "user/message", committed: true });
    expect(stageNote(t, 1)).toContain("c1");
  });
});

describe("request diff", () => {
  it("resolves baseRequestSeq chains", () => {
    const events = eventsOf(readmeRun());
    expect(resolveMessageSeqs(events, 8)).toEqual([4, 5, 6]);
    expect(resolveMessageSeqs(events, 14)).toEqual([4, 5, 6, 9, 11]);
    const chain = log(
      { type: "request/frozen", messageSeqs: [0] },
      { type: "request/frozen", messageSeqs: [1], baseRequestSeq: 0 },
      { type: "request/frozen", messageSeqs: [2], baseRequestSeq: 1 },
    );
    expect(resolveMessageSeqs(chain, 2)).toEqual([0, 1, 2]);
  });

  it("says what the next request adds: the tool result, steering, runtime context", () => {
    const events = eventsOf(readmeRun());
    const reqs = frozenRequests(events);
    const d = diffRequests(events, reqs, 1);
    expect(d).toMatchObject({ from: 8, to: 14, kept: 3, removed: [] });
    expect(d.added).toEqual([{ seq: 9, kind: "assistant", type: "assistant/message" }, { seq: 11, kind: "tool result", type: "tool/result" }]);
    const first = diffRequests(events, reqs, 0);
    expect(first.from).toBeNull();
    expect(first.added.map((a) => a.kind)).toEqual(["system", "user prompt", "runtime context"]);

    const steer = log(
      { type: "user/message", turn: 1, message: user("go") },
      { type: "request/frozen", turn: 1, step: 1, messageSeqs: [0] },
      { type: "assistant/message", turn: 1, step: 1, message: { role: "assistant", content: [call("c1")] } },
      { type: "tool/result", turn: 1, step: 1, message: toolMsg("c1", "x") },
      { type: "user/message", turn: 1, message: user("also check y") },
      { type: "user/message", turn: 1, message: ctx("cwd changed") },
      { type: "request/frozen", turn: 1, step: 2, messageSeqs: [0, 2, 3, 4, 5] },
    );
    const sd = diffRequests(steer, frozenRequests(steer), 1);
    expect(sd.added.map((a) => a.kind)).toEqual(["assistant", "tool result", "steering", "runtime context"]);
  });
});
