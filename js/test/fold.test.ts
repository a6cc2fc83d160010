import { describe, expect, it } from "vitest";
import { ClientSessionModel } from "../src/fold";
import type { FollowItem } from "../src/types";
import { readmeRun } from "./helpers";

describe("ClientSessionModel fold", () => {
  it("folds a real run: dense events, cursor, idle at the end, no live attempt left", () => {
    const m = new ClientSessionModel();
    m.applyAll(readmeRun());
    expect(m.cursor).toBe(17);
    expect(m.events.map((e) => e.seq)).toEqual([...Array(18).keys()]);
    expect(m.status).toBe("idle");
    expect(m.attempt).toBeNull();
    expect(m.gap).toBe(false);
    expect(m.turnEnds).toEqual([{ turn: 1, reason: { kind: "completed" }, seq: 17 }]);
    expect(m.finalAnswer()).toContain("demo-math");
  });

  it("streams text into the live attempt until the durable event settles it", () => {
    const items = readmeRun();
    const m = new ClientSessionModel();
    // stop right before assistant/message #15 arrives
    const cut = items.findIndex((it) => it.type === "event" && it.event.seq === 15);
    m.applyAll(items.slice(0, cut));
    expect(m.attempt).not.toBeNull();
    expect(m.liveText()).toContain("summary of README.md");
    m.applyAll(items.slice(cut, cut + 1));
    expect(m.attempt).toBeNull();
  });

  it("ignores duplicates and flags a gap", () => {
    const m = new ClientSessionModel();
    m.apply({ type: "snapshot", sessionId: "s_1", cursor: 1, events: [{ seq: 0, time: 1, type: "turn/start", turn: 1 }, { seq: 1, time: 2, type: "step/start", turn: 1, step: 1 }] });
    m.apply({ type: "event", event: { seq: 1, time: 2, type: "step/start" } });
    expect(m.events).toHaveLength(2);
    m.apply({ type: "event", event: { seq: 3, time: 3, type: "step/end" } });
    expect(m.gap).toBe(true);
    expect(m.cursor).toBe(1);
    // reopening from the cursor catches up
    m.apply({ type: "snapshot", sessionId: "s_1", cursor: 3, events: [{ seq: 2, time: 3, type: "x" }, { seq: 3, time: 4, type: "y" }] });
    expect(m.gap).toBe(false);
    expect(m.cursor).toBe(3);
  });

  it("a snapshot of another session resets the state", () => {
    const m = new ClientSessionModel();
    m.apply({ type: "snapshot", sessionId: "s_a", cursor: 0, events: [{ seq: 0, time: 1, type: "turn/start" }] });
    m.apply({ type: "snapshot", sessionId: "s_b", cursor: -1, events: [] });
    expect(m.events).toHaveLength(0);
    expect(m.cursor).toBe(-1);
  });

  it("rebuilds a live attempt and tool phases from the snapshot's live part (reload mid-stream)", () => {
    const m = new ClientSessionModel();
    const snap: FollowItem = {
      type: "snapshot", sessionId: "s_1", cursor: -1, events: [],
      live: {
        attached: true, status: "running", turn: 1, step: 1,
        assistant: { attemptId: "a1", turn: 1, step: 1, startedAfterSeq: 8, chunks: [
          { index: 0, time: 1, chunk: { type: "block-start", index: 0, blockType: "text" } },
          { index: 1, time: 2, chunk: { type: "text-delta", index: 0, text: "Hel" } },
          { index: 2, time: 3, chunk: { type: "text-delta", index: 0, text: "lo" } }] },
        tools: { c1: { callId: "c1", name: "write", phase: "approval", status: "waiting" } },
        approvals: [{ callId: "c1", name: "write", arguments: "{}" }],
      },
    };
    m.apply(snap);
    expect(m.status).toBe("running");
    expect(m.liveText()).toBe("Hello");
    expect(m.toolRuntime.get("c1")?.waiting).toBe(true);
    expect(m.waitingApprovals().map((a) => a.callId)).toEqual(["c1"]);
  });

  it("tracks approvals from events and submissions through delivery", () => {
    const m = new ClientSessionModel();
    m.submit("req_1", "hi");
    m.accepted("req_1", "rpc_3");
    expect(m.submissions.get("req_1")?.state).toBe("accepted");
    m.apply({ type: "snapshot", sessionId: "s", cursor: -1, events: [] });
    m.apply({ type: "event", event: { seq: 0, time: 1, type: "user/message", turn: 1, message: { role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user", requestId: "req_1" } } } });
    expect(m.submissions.get("req_1")).toMatchObject({ state: "delivered", seq: 0, turn: 1 });
    m.apply({ type: "event", event: { seq: 1, time: 2, type: "approval/asked", callId: "c9", name: "bash" } });
    expect(m.waitingApprovals().map((a) => a.callId)).toEqual(["c9"]);
    m.apply({ type: "event", event: { seq: 2, time: 3, type: "approval/decided", callId: "c9", name: "bash", decision: "deny" } });
    expect(m.waitingApprovals()).toEqual([]);
    m.rejected("req_2", { code: "EMPTY_CONTENT", message: "empty" });
    expect(m.submissions.get("req_2")?.state).toBe("rejected");
  });

  it("drops an abandoned attempt and keeps tool-call deltas", () => {
    const m = new ClientSessionModel();
    m.apply({ type: "assistant-stream", frame: { kind: "start", attemptId: "a" } });
    m.apply({ type: "assistant-stream", frame: { kind: "chunk", attemptId: "a", index: 0, chunk: { type: "tool-call-delta", index: 1, id: "c1", name: "read", argumentsDelta: '{"file_' } } });
    m.apply({ type: "assistant-stream", frame: { kind: "chunk", attemptId: "a", index: 1, chunk: { type: "tool-call-delta", index: 1, id: "c1", argumentsDelta: 'path":"x"}' } } });
    expect(m.attempt?.blocks[0]).toMatchObject({ type: "tool-call", id: "c1", name: "read", text: '{"file_path":"x"}' });
    m.apply({ type: "assistant-stream", frame: { kind: "end", attemptId: "a", outcome: { kind: "abandoned" } } });
    expect(m.attempt).toBeNull();
  });
});
