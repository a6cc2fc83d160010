// Connection (seed 001 L2): rpcId pairing of client-request/server-response, and multiplexed streams.
import {
  coded, type ClientEnvelope, type JsonValue, type RemoteErrorInfo, type ServerEnvelope, type StreamEndpoints, type UnaryEndpoints,
} from "./types";

/** A unary endpoint's name, its args and its result: generated from the Python table
 *  (dsh_notebook.wire.endpoints.ENDPOINTS → `UnaryEndpoints` in wire.gen.ts), never written here. */
export type UnaryMethod = keyof UnaryEndpoints;
export type ArgsOf<M extends UnaryMethod> = UnaryEndpoints[M]["args"];
export type ResultOf<M extends UnaryMethod> = UnaryEndpoints[M]["result"];
export type StreamEndpoint = keyof StreamEndpoints;

/** The `args` of an envelope: an endpoint's generated args type, as the envelope's JSON object. */
const asPayload = (args: object): { [k: string]: JsonValue } => args as { [k: string]: JsonValue };

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

export interface StreamHandlers<T = unknown> {
  item(value: T): void;
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
  call<M extends UnaryMethod>(method: M, args: ArgsOf<M>): Promise<ResultOf<M>> {
    if (this.closed) return Promise.reject(new RemoteError(coded("CLOSED", "connection closed")));
    const rpcId = `rpc_${this.prefix}${this.next++}`;
    return new Promise<ResultOf<M>>((resolve, reject) => {
      this.pending.set(rpcId, { resolve: resolve as (v: unknown) => void, reject, method });
      this.transport.send({ type: "client-request", rpcId, method, payload: { args: asPayload(args) } });
    });
  }

  /** Opens a stream; items arrive in order through `handlers.item`. */
  open<E extends StreamEndpoint>(endpoint: E, args: StreamEndpoints[E]["args"], handlers: StreamHandlers<StreamEndpoints[E]["items"]>): StreamHandle {
    const streamId = `st_${this.prefix}${this.next++}`;
    this.streams.set(streamId, handlers as StreamHandlers);
    this.transport.send({ type: "open", streamId, endpoint, payload: { args: asPayload(args) } });
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
