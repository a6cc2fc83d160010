// The anywidget comm as a Transport: envelopes ride in custom messages tagged with a connection
// id (several views and page reloads share one widget model; each view's connection filters).
import { ClientSessionModel } from "./fold";
import { Connection, type Transport } from "./connection";
import { LocalPages } from "./data/local";
import { SessionPages } from "./data/pages";
import { RemotePages } from "./data/remote";
import { Pricing, type PricingTable } from "./model/pricing";
import { Remote } from "./remote";
import type { ClientEnvelope, ServerEnvelope } from "./types";
import type { CommFromView, CommToView, JsonValue } from "./wire.gen";

/** The part of the anywidget model API we use (works in Lab, Notebook 7 and VS Code). */
export interface WidgetModel {
  get(name: string): unknown;
  on(event: string, cb: (...args: unknown[]) => void): void;
  off(event?: string | null, cb?: ((...args: unknown[]) => void) | null): void;
  send(content: unknown, callbacks?: unknown, buffers?: unknown[]): void;
  set?(name: string, value: unknown): void;
  save_changes?(): void;
}

/** What a view sends to the kernel (the wire's CommFromView, wire/comm.py). */
const fromView = (model: WidgetModel, message: CommFromView): void => model.send(message);

const utf8 = typeof TextDecoder === "function" ? new TextDecoder() : null;
function bufferText(b: DataView | ArrayBuffer | ArrayBufferView | undefined): string {
  if (!b || !utf8) return "null";
  return utf8.decode(b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength));
}

export class CommTransport implements Transport {
  readonly cid: string;
  private receivers = new Set<(e: ServerEnvelope) => void>();
  private readonly handler: (...args: unknown[]) => void;

  constructor(private readonly model: WidgetModel) {
    this.cid = `v${Math.random().toString(36).slice(2, 10)}`;
    this.handler = (msg: unknown, buffers?: unknown) => {
      // the kernel's CommToView: items are envelopes, their JSON text as the host encoded it
      // (decoded here, not in Python), or — in a large batch — the index of the buffer holding it
      const m = msg as Partial<CommToView> | null;
      if (!m || m.kind !== "batch" || (m.cid !== this.cid && m.cid !== "*")) return;
      const bufs = (Array.isArray(buffers) ? buffers : []) as DataView[];
      for (const raw of m.items ?? []) {
        const env = (typeof raw === "string" ? JSON.parse(raw) : typeof raw === "number" ? JSON.parse(bufferText(bufs[raw])) : raw) as ServerEnvelope;
        for (const r of this.receivers) r(env);
      }
    };
    model.on("msg:custom", this.handler);
  }
  send(envelope: ClientEnvelope): void {
    // a ClientEnvelope is JSON data; its interface has no index signature, so it is named as such
    fromView(this.model, { kind: "envelope", cid: this.cid, envelope: envelope as unknown as { [k: string]: JsonValue } });
  }
  onEnvelope(receive: (envelope: ServerEnvelope) => void): () => void {
    this.receivers.add(receive);
    return () => this.receivers.delete(receive);
  }
  close(): void {
    this.model.off("msg:custom", this.handler);
    try { fromView(this.model, { kind: "bye", cid: this.cid }); } catch { /* comm already closed */ }
  }
}

/** What all views of one widget model share in a page: one connection, one fold (a window of
 *  the session: at most `window` events), the pages of what the window does not hold. */
export interface Shared {
  transport: CommTransport;
  connection: Connection;
  remote: Remote;
  fold: ClientSessionModel;
  pages: SessionPages;
  /** The most events the fold holds (0: all of them). */
  window: number;
  sessionId?: string;
  follow?: { cancel(): void };
  refs: number;
}

/** The window a widget holds when its model does not say (the widgets' `window` trait): a longer
 *  session's rest comes from the kernel in pages (the inspector's rows, the loop widget's parts). */
export const DEFAULT_WINDOW = 2000;

const shared = new WeakMap<object, Shared>();

export function acquire(model: WidgetModel): Shared {
  let s = shared.get(model);
  if (!s) {
    const transport = new CommTransport(model);
    const connection = new Connection(transport, `${transport.cid}_`);
    const remote = new Remote(connection);
    const fold = new ClientSessionModel();
    const pricing = new Pricing((model.get("pricing") as PricingTable | undefined) ?? undefined);
    const w = model.get("window");
    const made: Shared = { transport, connection, remote, fold, refs: 0, window: typeof w === "number" && w >= 0 ? w : DEFAULT_WINDOW,
      pages: null as unknown as SessionPages };
    made.pages = new SessionPages(fold, new LocalPages(fold, pricing),
      new RemotePages(fold, (q) => remote.page(made.sessionId ?? String(model.get("session_id") ?? ""), q)));
    s = made;
    shared.set(model, s);
  }
  s.refs += 1;
  return s;
}

export function release(model: WidgetModel, s: Shared): void {
  s.refs -= 1;
  if (s.refs > 0) return;
  s.follow?.cancel();
  s.pages.dispose();
  s.connection.close();
  s.transport.close();
  shared.delete(model);
}

/** Open (or reopen after a gap) the follow stream from the fold's cursor. */
export function follow(s: Shared, sessionId: string, onError: (message: string) => void, attempt = 0): void {
  s.sessionId = sessionId;
  s.follow?.cancel();
  const items: unknown[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const batch = items.splice(0);
    const before = s.fold.cursor;
    s.fold.applyAll(batch as never[]);
    // a window: the oldest events go once it holds half as many again (the rest comes in pages)
    if (s.window > 0 && s.fold.events.length > s.window * 1.5) s.fold.trim(s.window);
    if (!s.fold.gap) return;
    // missed events: reopen and catch up from the cursor (give up when that makes no progress)
    const tries = s.fold.cursor > before ? 0 : attempt + 1;
    if (tries > 3) onError(`follow stream keeps skipping events after seq ${s.fold.cursor}`);
    else follow(s, sessionId, onError, tries);
  };
  s.follow = s.remote.follow(sessionId, s.fold.cursor, {
    item(value) {
      items.push(value);
      if (!scheduled) { scheduled = true; queueMicrotask(flush); }
    },
    error(err) { onError(`${err.code}: ${err.message}`); },
  }, s.window || undefined);
}
