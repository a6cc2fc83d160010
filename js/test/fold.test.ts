import { describe, expect, it } from "vitest";
import { ClientSessionModel } from "../src/fold";
import { item, readmeRun, streamItems } from "./helpers";

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
    const cut = items.findIndex((it) => it.type === "event" && it.event.seq === 15);
    m.applyAll(items.slice(0, cut));
    expect(m.attempt).not.toBeNull();
    expect(m.liveText()).toContain("summary of README.md");
    m.applyAll(items.slice(cut, cut + 1));
    expect(m.attempt).toBeNull();
  });

  it("a recorded steering run: queued, claimed, delivered and rejected-free submissions, tool phases", () => {
    const m = new ClientSessionModel();
    m.applyAll(streamItems("steering"));
    const subs = Object.values(m.submissions);
    expect(subs.map((s) => [s.requestId, s.state])).toEqual([["req_1", "delivered"], ["req_2", "delivered"], ["req_3", "delivered"]]);
    expect(m.submissions.req_2.turn).toBe(1); // the steering prompt joined the running turn
    expect(m.submissions.req_3.turn).toBe(2); // the queued one ran as the next turn
    expect(m.inbox).toEqual({ "next-turn": [], "next-step": [] });
    const bash = Object.values(m.tools).find((t) => t.name === "bash");
    expect(bash?.phases.map((p) => p.phase)).toContain("approval");
    expect(bash?.waiting).toBe(false);
    expect(m.waitingApprovals()).toEqual([]);
  });

  it("a recorded cancel: the queued prompt is canceled, the turn ends aborted", () => {
    const m = new ClientSessionModel();
    m.applyAll(streamItems("cancel"));
    expect(m.submissions.req_2.state).toBe("canceled");
    expect(m.submissionOutcome("req_2")?.reason).toEqual({ kind: "aborted", cause: "canceled before it ran" });
    expect(m.submissionOutcome("req_1")?.reason).toMatchObject({ kind: "aborted" });
  });

  it("ignores duplicates and flags a gap", () => {
    const m = new ClientSessionModel();
    m.apply(item({ type: "snapshot", sessionId: "s_1", cursor: 1, events: [{ seq: 0, time: 1, type: "turn/start", turn: 1 }, { seq: 1, time: 2, type: "step/start", turn: 1, step: 1 }] }));
    m.apply(item({ type: "event", event: { seq: 1, time: 2, type: "step/start" } }));
    expect(m.events).toHaveLength(2);
    m.apply(item({ type: "event", event: { seq: 3, time: 3, type: "step/end" } }));
    expect(m.gap).toBe(true);
    expect(m.cursor).toBe(1);
    m.apply(item({ type: "snapshot", sessionId: "s_1", cursor: 3, events: [{ seq: 2, time: 3, type: "step/end" }, { seq: 3, time: 4, type: "step/start" }] }));
    expect(m.gap).toBe(false);
    expect(m.cursor).toBe(3);
  });

  it("a snapshot of another session resets the state", () => {
    const m = new ClientSessionModel();
    m.apply(item({ type: "snapshot", sessionId: "s_a", cursor: 0, events: [{ seq: 0, time: 1, type: "turn/start" }] }));
    m.apply(item({ type: "snapshot", sessionId: "s_b", cursor: -1, events: [] }));
    expect(m.events).toHaveLength(0);
    expect(m.cursor).toBe(-1);
  });

  it("rebuilds a live attempt and tool phases from the snapshot's live part (reload mid-stream)", () => {
    const m = new ClientSessionModel();
    m.apply(item({
      type: "snapshot", sessionId: "s_1", cursor: -1, events: [],
      live: {
        attached: true, status: "running", turn: 1, step: 1,
        assistant: { attemptId: "a1", turn: 1, step: 1, startedAfterSeq: 8, chunks: [
          { index: 0, time: 1, chunk: { type: "block-start", index: 0, blockType: "text" } },
          { index: 1, time: 2, chunk: { type: "text-delta", index: 0, text: "Hel" } },
          { index: 2, time: 3, chunk: { type: "text-delta", index: 0, text: "lo" } }] },
        tools: { c1: { callId: "c1", name: "write", phase: "approval", status: "waiting", time: 4 } },
        approvals: [{ callId: "c1", name: "write", arguments: "{}" }],
      },
    }));
    expect(m.status).toBe("running");
    expect(m.liveText()).toBe("Hello");
    expect(m.attempt?.lastChunkTime).toBe(3);
    expect(m.tools.c1.waiting).toBe(true);
    expect(m.waitingApprovals().map((a) => a.callId)).toEqual(["c1"]);
  });

  it("tracks approvals from events and submissions through delivery", () => {
    const m = new ClientSessionModel("s");
    m.submit("req_1", "hi");
    m.accepted("req_1", "rpc_3");
    expect(m.submissions.req_1.state).toBe("accepted");
    m.apply(item({ type: "snapshot", sessionId: "s", cursor: -1, events: [] }));
    m.apply(item({ type: "event", event: { seq: 0, time: 1, type: "user/message", turn: 1, message: { role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user", requestId: "req_1" } } } }));
    expect(m.submissions.req_1).toMatchObject({ state: "delivered", seq: 0, turn: 1, claimSeq: 0 });
    m.apply(item({ type: "event", event: { seq: 1, time: 2, type: "approval/asked", callId: "c9", name: "bash" } }));
    expect(m.waitingApprovals().map((a) => a.callId)).toEqual(["c9"]);
    m.apply(item({ type: "event", event: { seq: 2, time: 3, type: "approval/decided", callId: "c9", name: "bash", decision: "deny" } }));
    expect(m.waitingApprovals()).toEqual([]);
    m.rejected("req_2", { code: "EMPTY_CONTENT", message: "empty" });
    expect(m.submissions.req_2.state).toBe("rejected");
  });

  it("drops an abandoned attempt and keeps tool-call deltas", () => {
    const m = new ClientSessionModel();
    m.apply(item({ type: "assistant-stream", frame: { kind: "start", attemptId: "a" } }));
    m.apply(item({ type: "assistant-stream", frame: { kind: "chunk", attemptId: "a", index: 0, chunk: { type: "tool-call-delta", index: 1, id: "c1", name: "read", argumentsDelta: '{"file_' } } }));
    m.apply(item({ type: "assistant-stream", frame: { kind: "chunk", attemptId: "a", index: 1, chunk: { type: "tool-call-delta", index: 1, id: "c1", argumentsDelta: 'path":"x"}' } } }));
    expect(m.attempt?.blocks[0]).toMatchObject({ type: "tool-call", id: "c1", name: "read", text: '{"file_path":"x"}' });
    m.apply(item({ type: "assistant-stream", frame: { kind: "end", attemptId: "a", outcome: { kind: "abandoned" } } }));
    expect(m.attempt).toBeNull();
  });

  it("state() is plain JSON with null for the unknown", () => {
    const m = new ClientSessionModel("s_1");
    const s = m.state();
    expect(s).toEqual({ sessionId: "s_1", header: null, start: -1, cursor: -1, events: [], status: "idle", turn: null, step: null, attempt: null,
      tools: {}, approvals: {}, queue: [], inbox: { "next-turn": [], "next-step": [] }, submissions: {}, turnEnds: [], paused: null, gap: false });
  });
});
