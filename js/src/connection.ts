// Connection (seed 001 L2): rpcId pairing of client-request/server-response, and multiplexed streams.
import { coded, type ClientEnvelope, type JsonValue, type RemoteErrorInfo, type ServerEnvelope } from "./types";

/** Carries envelopes to the host and back (an anywidget comm, a fake in tests). */
export interface Transport {
  send(envelope: ClientEnvelope): void;
  /** Register the receiver of server envelopes; returns an unsubscribe function. */
  onEnvelope(receive: (envelope: ServerEnvelope) => void): () => void;
}

export class RemoteError extends Error {
  readonly code: string;
  constructor(info: RemoteErrorInfo) {
    super(info.message);
    this.code = info.code;
    this.name = "RemoteError";
  }
}

export interface StreamHandlers {
  item(value: unknown): void;
  end?(): void;
  error?(error: RemoteError): void;
}

export interface StreamHandle { readonly streamId: string; cancel(): void }

interface Pending { resolve(value: unknown): void; reject(error: Error): void; method: string }

export class Connection {
  private next = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly streams = new Map<string, StreamHandlers>();
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(private readonly transport: Transport, private readonly prefix = "") {
    this.unsubscribe = transport.onEnvelope((env) => this.receive(env));
  }

  /** A unary call: sends a `client-request` with a fresh rpcId, resolves with the result value. */
  call<T = unknown>(method: string, args: Record<string, unknown>): Promise<T> {
    if (this.closed) return Promise.reject(new RemoteError(coded("CLOSED", "connection closed")));
    const rpcId = `rpc_${this.prefix}${this.next++}`;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(rpcId, { resolve: resolve as (v: unknown) => void, reject, method });
      this.transport.send({ type: "client-request", rpcId, method, payload: { args: args as { [k: string]: JsonValue } } });
    });
  }

  /** Opens a stream; items arrive in order through `handlers.item`. */
  open(endpoint: string, payload: Record<string, unknown>, handlers: StreamHandlers): StreamHandle {
    const streamId = `st_${this.prefix}${this.next++}`;
    this.streams.set(streamId, handlers);
    this.transport.send({ type: "open", streamId, endpoint, payload: { args: payload as { [k: string]: JsonValue } } });
    return {
      streamId,
      cancel: () => {
        if (this.streams.delete(streamId) && !this.closed) this.transport.send({ type: "cancel", streamId });
      },
    };
  }

  receive(env: ServerEnvelope): void {
    switch (env.type) {
      case "server-response": {
        const p = env.rpcId === null ? undefined : this.pending.get(env.rpcId);
        if (!p || env.rpcId === null) return; // not ours (another view's connection), a late duplicate or unpairable
        this.pending.delete(env.rpcId);
        if (env.result.ok) p.resolve(env.result.value);
        else p.reject(new RemoteError(env.result.error));
        return;
      }
      case "item": {
        const s = this.streams.get(env.streamId);
        if (s) s.item(env.value);
        return;
      }
      case "end": {
        const s = this.streams.get(env.streamId);
        this.streams.delete(env.streamId);
        s?.end?.();
        return;
      }
      case "error": {
        const s = this.streams.get(env.streamId);
        this.streams.delete(env.streamId);
        s?.error?.(new RemoteError(env.error));
        return;
      }
    }
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  close(): void {
    if (this.closed) return;
    for (const id of [...this.streams.keys()]) this.transport.send({ type: "cancel", streamId: id });
    this.closed = true;
    this.unsubscribe();
    for (const p of this.pending.values()) p.reject(new RemoteError(coded("CLOSED", "connection closed")));
    this.pending.clear();
    this.streams.clear();
  }
}
