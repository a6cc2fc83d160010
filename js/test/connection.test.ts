import { describe, expect, it } from "vitest";
import { Connection, RemoteError, type Transport } from "../src/connection";
import { Remote } from "../src/remote";
import type { ClientEnvelope, ServerEnvelope } from "../src/types";

class FakeTransport implements Transport {
  sent: ClientEnvelope[] = [];
  private rx: ((e: ServerEnvelope) => void) | null = null;
  send(e: ClientEnvelope) { this.sent.push(e); }
  onEnvelope(r: (e: ServerEnvelope) => void) { this.rx = r; return () => { this.rx = null; }; }
  deliver(e: ServerEnvelope) { this.rx?.(e); }
}

describe("Connection + Remote", () => {
  it("pairs responses by rpcId, in any order", async () => {
    const t = new FakeTransport();
    const r = new Remote(new Connection(t));
    const a = r.create({ model: "script:readme" });
    const b = r.prompt({ sessionId: "s_1", requestId: "req_1", mode: "queue", content: "hi" });
    expect(t.sent.map((e) => e.type)).toEqual(["client-request", "client-request"]);
    const [ea, eb] = t.sent as Extract<ClientEnvelope, { type: "client-request" }>[];
    expect(eb.method).toBe("session/prompt");
    expect(eb.payload?.args).toEqual({ request: { sessionId: "s_1", requestId: "req_1", mode: "queue", content: "hi" } });
    t.deliver({ type: "server-response", rpcId: eb.rpcId, result: { ok: true, value: { accepted: true } } });
    t.deliver({ type: "server-response", rpcId: ea.rpcId, result: { ok: false, error: { code: "BAD_MODEL", message: "no" } } });
    await expect(b).resolves.toEqual({ accepted: true });
    await expect(a).rejects.toMatchObject({ code: "BAD_MODEL" });
  });

  it("routes stream items, end and error; cancel sends a cancel envelope", () => {
    const t = new FakeTransport();
    const c = new Connection(t);
    const got: unknown[] = [];
    let ended = false;
    let err: RemoteError | null = null;
    const h1 = c.open("session/follow", { sessionId: "s_1" }, { item: (v) => got.push(v), end: () => { ended = true; } });
    const h2 = c.open("session/follow", { sessionId: "nope" }, { item: () => {}, error: (e) => { err = e; } });
    t.deliver({ type: "item", streamId: h1.streamId, value: { type: "status", status: "idle", turn: null, step: null } });
    t.deliver({ type: "error", streamId: h2.streamId, error: { code: "UNKNOWN_SESSION", message: "no" } });
    t.deliver({ type: "end", streamId: h1.streamId });
    expect(got).toEqual([{ type: "status", status: "idle", turn: null, step: null }]);
    expect(ended).toBe(true);
    expect((err as RemoteError | null)?.code).toBe("UNKNOWN_SESSION");
    const h3 = c.open("session/follow", { sessionId: "s_2" }, { item: () => {} });
    h3.cancel();
    expect(t.sent.at(-1)).toEqual({ type: "cancel", streamId: h3.streamId });
  });

  it("ignores responses for other connections and rejects pending calls on close", async () => {
    const t = new FakeTransport();
    const c = new Connection(t, "x_");
    const p = c.call("session/info", { sessionId: "s" });
    t.deliver({ type: "server-response", rpcId: "rpc_other_1", result: { ok: true, value: { accepted: true } } });
    expect(c.pendingCount).toBe(1);
    c.close();
    await expect(p).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("follow passes the cursor only when there is one", () => {
    const t = new FakeTransport();
    const r = new Remote(new Connection(t));
    r.follow("s_1", -1, { item: () => {} });
    r.follow("s_1", 41, { item: () => {} });
    const opens = t.sent as Extract<ClientEnvelope, { type: "open" }>[];
    expect(opens[0].payload).toEqual({ args: { sessionId: "s_1" } });
    expect(opens[1].payload).toEqual({ args: { sessionId: "s_1", cursor: 41 } });
  });
});
