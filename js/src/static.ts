// A widget model with no kernel behind it: the Transport of an exported page (python -m
// dsh_notebook export-html, and the text/html fallback of a saved notebook). It answers the
// widget's envelopes itself, from a session embedded in the page — session/follow with a
// snapshot of the embedded events, session/info from the embedded header — and every other
// call with the coded error READ_ONLY. Nothing leaves the page.
import type { WidgetModel } from "./transport";
import { coded, type ClientEnvelope, type JsonValue, type SessionEvent, type SessionHeader } from "./types";

/** What an exported page embeds (dsh_notebook/observe/export_html.py writes it). */
export interface EmbeddedSession {
  sessionId: string;
  header: SessionHeader;
  events: SessionEvent[];
  info: Record<string, unknown>;
  /** the price table the live widgets get as their `pricing` trait (cost figures in the header) */
  pricing?: unknown;
}

type Handler = (...args: unknown[]) => void;

/** The `args` of an envelope's payload (`{}` when it has none). */
function argsOf(env: ClientEnvelope): { [k: string]: JsonValue } {
  const payload = env.type === "cancel" ? null : env.payload;
  const args = payload?.args;
  return args && typeof args === "object" && !Array.isArray(args) ? args : {};
}

export const READ_ONLY_MESSAGE = "this is an exported page: it replays a saved session and runs nothing (open the session in a notebook to continue it)";

export class StaticModel implements WidgetModel {
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly state: Record<string, unknown>;

  constructor(private readonly data: EmbeddedSession, kind: "loop" | "inspector") {
    // window 0: the page holds the whole session (no kernel to read pages from)
    this.state = { kind, session_id: data.sessionId, readonly: true, error: "", create_args: {}, pricing: data.pricing, window: 0 };
  }

  get(name: string): unknown { return this.state[name]; }
  set(name: string, value: unknown): void { this.state[name] = value; }
  save_changes(): void { /* nothing to save: no kernel */ }
  on(event: string, cb: Handler): void {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event)?.add(cb);
  }
  off(event?: string | null, cb?: Handler | null): void {
    if (event && cb) this.handlers.get(event)?.delete(cb);
    else if (event) this.handlers.delete(event);
    else this.handlers.clear();
  }

  send(content: unknown): void {
    const c = content as { kind?: "envelope" | "bye"; cid?: string; envelope?: ClientEnvelope };
    if (c.kind !== "envelope" || !c.envelope) return; // "bye": nothing to close
    const items = this.answer(c.envelope);
    if (items.length) queueMicrotask(() => { for (const h of this.handlers.get("msg:custom") ?? []) h({ kind: "batch", cid: c.cid, items }); });
  }

  /** The envelopes the host would send back for one client envelope. */
  answer(env: ClientEnvelope): unknown[] {
    const args = argsOf(env);
    const unknownSession = args.sessionId !== undefined && args.sessionId !== this.data.sessionId;
    if (env.type === "open") {
      if (env.endpoint !== "session/follow") return [{ type: "error", streamId: env.streamId, error: coded("READ_ONLY", READ_ONLY_MESSAGE) }];
      if (unknownSession) return [{ type: "error", streamId: env.streamId, error: coded("UNKNOWN_SESSION", `no session ${String(args.sessionId)} in this page`) }];
      return [{ type: "item", streamId: env.streamId, value: this.snapshot(typeof args.cursor === "number" ? args.cursor : -1) }];
    }
    if (env.type !== "client-request") return []; // cancel: the stream just ends with the page
    if (env.method === "session/info" && !unknownSession) return [{ type: "server-response", rpcId: env.rpcId, result: { ok: true, value: this.data.info } }];
    const err = unknownSession ? coded("UNKNOWN_SESSION", `no session ${String(args.sessionId)} in this page`) : coded("READ_ONLY", READ_ONLY_MESSAGE);
    return [{ type: "server-response", rpcId: env.rpcId, result: { ok: false, error: err } }];
  }

  /** session/follow's first item: the embedded events after `cursor`, an idle run, no live part. */
  snapshot(cursor: number): unknown {
    const events = this.data.events.filter((e) => (e.seq ?? -1) > cursor);
    const last = this.data.events.length ? this.data.events[this.data.events.length - 1].seq ?? -1 : -1;
    return {
      type: "snapshot", sessionId: this.data.sessionId, header: this.data.header, cursor: last, events,
      live: { attached: false, status: "idle", turn: null, step: null, assistant: null, tools: {}, approvals: [] },
    };
  }
}
