import { describe, expect, it } from "vitest";
import { CommTransport } from "../src/transport";
import type { ServerEnvelope } from "../src/types";

type Handler = (...args: unknown[]) => void;

describe("CommTransport", () => {
  it("decodes items inline, as JSON text, and from the message's binary buffers", () => {
    const handlers: Handler[] = [];
    const model = { get: () => undefined, on: (_e: string, cb: Handler) => handlers.push(cb), off: () => undefined, send: () => undefined };
    const t = new CommTransport(model);
    const got: ServerEnvelope[] = [];
    t.onEnvelope((e) => got.push(e));
    const env = (streamId: string) => ({ type: "end", streamId }) as ServerEnvelope;
    const bytes = new TextEncoder().encode(JSON.stringify({ type: "end", streamId: "é-buffered" }));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const h of handlers) h({ kind: "batch", cid: t.cid, items: [env("inline"), JSON.stringify(env("text")), 0] }, [view]);
    for (const h of handlers) h({ kind: "batch", cid: "other-view", items: [env("not ours")] }, []);
    expect(got.map((e) => (e as { streamId: string }).streamId)).toEqual(["inline", "text", "é-buffered"]);
  });
});
