// The pages of a session from the kernel (`session/page`, dsh_notebook/host/pages.py): while the
// widget's fold holds only a window of the session. Pages are kept (the most recently used few
// dozen) and asked again, at most every quarter second, once the session has grown past what a
// page was computed on; a rows page that came `partial` (the kernel had not read the whole log
// yet) is asked again `complete`. Every page that arrives fires `onChange`.
import type { ClientSessionModel } from "../fold";
import type { Page } from "../wire.gen";
import { pageKey, type AnyPage, type PageFor, type PageQuery, type PageSource } from "./pages";

const KEEP = 64;
const AGAIN_MS = 250;

interface Held { page: AnyPage; count: number; asked: number }

export class RemotePages implements PageSource {
  readonly local = false;
  error = "";
  private readonly held = new Map<string, Held>();
  private readonly inflight = new Map<string, Promise<AnyPage>>();
  private readonly listeners = new Set<() => void>();
  private disposed = false;

  constructor(private readonly fold: ClientSessionModel, private readonly ask: (query: PageQuery) => Promise<Page>) {}

  get<Q extends PageQuery>(q: Q): PageFor<Q> | undefined {
    const key = pageKey(q);
    const hit = this.held.get(key);
    const count = this.fold.cursor + 1;
    if (!hit) void this.request(q, key).catch(() => undefined);
    else {
      this.held.delete(key); // most recently used last
      this.held.set(key, hit);
      if (hit.count < count && !this.inflight.has(key) && Date.now() - hit.asked >= AGAIN_MS) void this.request(q, key).catch(() => undefined);
    }
    return hit?.page as PageFor<Q> | undefined;
  }

  fetch<Q extends PageQuery>(q: Q): Promise<PageFor<Q>> {
    return this.request(q, pageKey(q)) as Promise<PageFor<Q>>;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
    this.held.clear();
  }

  private fire(): void {
    if (!this.disposed) for (const fn of this.listeners) fn();
  }

  private keep(key: string, page: AnyPage): void {
    const old = this.held.get(key);
    this.held.delete(key);
    this.held.set(key, { page, count: page.count, asked: old?.asked ?? Date.now() });
    while (this.held.size > KEEP) this.held.delete(this.held.keys().next().value as string);
  }

  private request(q: PageQuery, key: string): Promise<AnyPage> {
    const running = this.inflight.get(key);
    if (running) return running;
    const old = this.held.get(key);
    if (old) old.asked = Date.now();
    const p = this.ask(q).then(({ page }) => {
      if (this.disposed) return page;
      this.error = "";
      this.keep(key, page);
      if (page.kind === "rows" && page.partial && q.kind === "rows" && !q.complete) {
        // the first rows of a log the kernel is still reading: the durations column follows
        void this.ask({ ...q, complete: true }).then(({ page: full }) => { if (!this.disposed) { this.keep(key, full); this.fire(); } })
          .catch(() => undefined);
      }
      this.fire();
      return page;
    }, (e: unknown) => {
      const err = e as { code?: string; message?: string };
      this.error = `${err.code ?? "ERROR"}: ${err.message ?? String(e)}`;
      this.fire();
      throw e;
    }).finally(() => this.inflight.delete(key));
    this.inflight.set(key, p);
    return p;
  }
}
