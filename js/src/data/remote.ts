// The pages of a session from the kernel (`session/page`, dsh_notebook/host/pages.py): while the
// widget's fold holds only a window of the session. Pages are kept (the most recently used few
// dozen) and asked again, at most every quarter second, once the session has grown past what a
// page was computed on (a panel asking sooner is told to ask again when it may); a rows page that came `partial` (the kernel had not read the whole log
// yet) is asked again `complete`. Every page that arrives fires `onChange`.
//
// No page is waited for silently for ever: a request not answered in RESEND_MS is sent again (a
// message lost on the way, a kernel busy with a cell); after TRIES unanswered sends it fails
// `PAGE_TIMEOUT` (the panel's error line says so), and an answer that still comes is kept and
// clears it. A query that failed is asked again by the panels only after a backoff (RETRY_MS,
// growing), never once a frame; `onChange` fires when it is due, so the panel asks again.
import { RemoteError } from "../connection";
import type { ClientSessionModel } from "../fold";
import { coded } from "../types";
import type { Page } from "../wire.gen";
import { pageKey, type AnyPage, type PageFor, type PageQuery, type PageSource } from "./pages";

const KEEP = 64;
const AGAIN_MS = 250;
/** A page request not answered in this time is sent again. */
export const RESEND_MS = 10_000;
/** Sends of one request before it fails `PAGE_TIMEOUT`. */
export const TRIES = 3;
/** The waits before a failed query is asked again by a panel (the last one repeats). */
export const RETRY_MS = [1_000, 4_000, 15_000, 30_000];

interface Held { page: AnyPage; count: number; asked: number }
interface Failed { at: number; times: number }

export class RemotePages implements PageSource {
  readonly local = false;
  error = "";
  private readonly held = new Map<string, Held>();
  private readonly inflight = new Map<string, Promise<AnyPage>>();
  private readonly failed = new Map<string, Failed>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly due = new Set<string>(); // stale pages a timer will have asked for again
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(private readonly fold: ClientSessionModel, private readonly ask: (query: PageQuery) => Promise<Page>) {}

  get<Q extends PageQuery>(q: Q): PageFor<Q> | undefined {
    const key = pageKey(q);
    const hit = this.held.get(key);
    const count = this.fold.cursor + 1;
    if (!hit) {
      if (!this.inflight.has(key) && this.askable(key)) void this.request(q, key).catch(() => undefined);
    } else {
      this.held.delete(key); // most recently used last
      this.held.set(key, hit);
      if (hit.count < count && !this.inflight.has(key)) {
        const wait = hit.asked + AGAIN_MS - Date.now();
        if (wait <= 0) void this.request(q, key).catch(() => undefined);
        else if (!this.due.has(key)) { // asked a moment ago: the panel is told to ask again then
          this.due.add(key);
          this.after(wait, () => { this.due.delete(key); this.fire(); });
        }
      }
    }
    return hit?.page as PageFor<Q> | undefined;
  }

  fetch<Q extends PageQuery>(q: Q, hold = true): Promise<PageFor<Q>> {
    const key = pageKey(q);
    return this.request(q, key, key, hold) as Promise<PageFor<Q>>;
  }

  /** Requests sent and not answered yet (one per query, whatever its sends). */
  get pending(): number { return this.inflight.size; }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  dispose(): void {
    this.disposed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.listeners.clear();
    this.held.clear();
  }

  private fire(): void {
    if (!this.disposed) for (const fn of this.listeners) fn();
  }

  private after(ms: number, fn: () => void): void {
    if (this.disposed) return;
    const t = setTimeout(() => { this.timers.delete(t); if (!this.disposed) fn(); }, ms);
    this.timers.add(t);
  }

  /** Whether a query may be asked by a panel now (not within the backoff of its last failure). */
  private askable(key: string): boolean {
    const f = this.failed.get(key);
    return !f || Date.now() - f.at >= RETRY_MS[Math.min(f.times, RETRY_MS.length) - 1];
  }

  private keep(key: string, page: AnyPage): void {
    const old = this.held.get(key);
    this.held.delete(key);
    this.held.set(key, { page, count: page.count, asked: old?.asked ?? Date.now() });
    while (this.held.size > KEEP) this.held.delete(this.held.keys().next().value as string);
  }

  /** A page arrived (in time or late): held under `into`, the failure forgotten, the error cleared. */
  private arrived(q: PageQuery, into: string, page: AnyPage, hold = true): void {
    if (this.disposed) return;
    this.failed.delete(into);
    this.error = "";
    if (hold) this.keep(into, page);
    if (hold && page.kind === "rows" && page.partial && q.kind === "rows" && !q.complete) {
      // the first rows of a log the kernel is still reading: the durations column follows (held
      // as the page of the query the panel asked)
      const full = { ...q, complete: true };
      void this.request(full, pageKey(full), into).catch(() => undefined);
    }
    this.fire();
  }

  /** Ask for `q` (one request per `key` at a time); its page is held under `into` (unless `hold`
   *  is false). */
  private request(q: PageQuery, key: string, into = key, hold = true): Promise<AnyPage> {
    const running = this.inflight.get(key);
    if (running) return running;
    const old = this.held.get(into);
    if (old) old.asked = Date.now();
    const p = new Promise<AnyPage>((resolve, reject) => {
      let settled = false;
      let sends = 0;
      const settle = () => { settled = true; this.inflight.delete(key); };
      const send = () => {
        sends += 1;
        this.ask(q).then(({ page }) => {
          const first = !settled;
          if (first) settle();
          this.arrived(q, into, page, hold); // a late answer (after PAGE_TIMEOUT, or to an earlier send) is kept too
          if (first) resolve(page);
        }, (e: unknown) => {
          if (settled) return;
          settle();
          this.failure(into, e);
          reject(e);
        });
        this.after(RESEND_MS, () => {
          if (settled) return;
          if (sends < TRIES) { send(); return; }
          settle();
          const e = new RemoteError(coded("PAGE_TIMEOUT", `the kernel has not answered a ${q.kind} page in ${Math.round(TRIES * RESEND_MS / 1000)} s `
            + `(asked ${TRIES} times; a cell that is still running holds the widget's messages until it ends) — asked again shortly`));
          this.failure(into, e);
          reject(e);
        });
      };
      send();
    });
    this.inflight.set(key, p);
    return p;
  }

  private failure(key: string, e: unknown): void {
    if (this.disposed) return;
    const err = e as { code?: string; message?: string };
    this.error = `${err.code ?? "ERROR"}: ${err.message ?? String(e)}`;
    const times = (this.failed.get(key)?.times ?? 0) + 1;
    this.failed.set(key, { at: Date.now(), times });
    // the panels ask again once the backoff is over (a render that asks for it then)
    this.after(RETRY_MS[Math.min(times, RETRY_MS.length) - 1], () => this.fire());
    this.fire();
  }
}
