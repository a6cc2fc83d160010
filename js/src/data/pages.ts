// The pages of a session's views (issue 38 item 1; dsh_notebook/wire/pages.py): what the panels
// draw — the event list, its filters, the stats tables, the timeline, a turn, a request diff, the
// derived messages, an export part — one page at a time. A widget holds a window of the session
// (its fold); while the window holds the whole session the pages are computed here from it
// (data/local.ts, the twin of dsh_notebook/pages/), once it holds less they come from
// the kernel (data/remote.ts, `session/page`). Either way a panel asks `pages.get(query)`: the
// page when it is held (then a fresher one may follow), else undefined while it comes — and
// `onChange` says when something arrived.
import type { ClientSessionModel } from "../fold";
import type { SessionStats } from "../model/trajectory";
import type {
  ExportPage, ExportQuery, Facets, FacetsQuery, MessagesPage, MessagesQuery, Page, RequestDiffPage, RequestDiffQuery,
  RowsPage, RowsQuery, StatsPage, StatsQuery, TimelinePage, TimelineQuery, TurnPage, TurnQuery,
} from "../wire.gen";

export type PageQuery = RowsQuery | FacetsQuery | StatsQuery | TimelineQuery | TurnQuery | RequestDiffQuery | MessagesQuery | ExportQuery;
export type AnyPage = Page["page"];
export interface PageOf {
  rows: RowsPage; facets: Facets; stats: StatsPage; timeline: TimelinePage; turn: TurnPage;
  "request-diff": RequestDiffPage; messages: MessagesPage; export: ExportPage;
}
export type PageFor<Q extends PageQuery> = PageOf[Q["kind"]];

export interface PageSource {
  /** The pages are computed in the browser (the fold holds the whole session). */
  readonly local: boolean;
  /** The page of `q` when it is held, else undefined (it is on its way: `onChange` fires). */
  get<Q extends PageQuery>(q: Q): PageFor<Q> | undefined;
  /** The page of `q`, fresh; `hold: false`: not kept among the pages held (a large page its caller
   *  keeps itself: the loop widget's part of a session). */
  fetch<Q extends PageQuery>(q: Q, hold?: boolean): Promise<PageFor<Q>>;
  /** The last error a page request met (`CODE: message`), or "". */
  readonly error: string;
  onChange(fn: () => void): () => void;
  dispose(): void;
}

/** The pages of a followed session: computed here while its fold holds all of it, else the
 *  kernel's (the choice is made at each call: a live session can outgrow its window). */
export class SessionPages implements PageSource {
  private readonly listeners = new Set<() => void>();
  private readonly unsubs: (() => void)[];

  constructor(private readonly fold: ClientSessionModel, private readonly here: PageSource, private readonly there: PageSource) {
    const fire = () => { for (const fn of this.listeners) fn(); };
    this.unsubs = [here.onChange(fire), there.onChange(fire)];
  }

  private get which(): PageSource { return this.fold.whole ? this.here : this.there; }
  get local(): boolean { return this.fold.whole; }
  /** Ask the kernel for `q` before the window says whether it holds the whole session (a long
   *  session's first rows then come with its follow's snapshot, not one round trip after it). */
  prefetch(q: PageQuery): void { void this.there.fetch(q).catch(() => undefined); }
  /** The kernel's page of `q` whatever the window holds (`hold`: kept among the pages held) — a
   *  part of the session read before the window says how much of it it holds. */
  kernel<Q extends PageQuery>(q: Q, hold = false): Promise<PageFor<Q>> { return this.there.fetch(q, hold); }
  get error(): string { return this.which.error; }
  get<Q extends PageQuery>(q: Q): PageFor<Q> | undefined { return this.which.get(q); }
  fetch<Q extends PageQuery>(q: Q, hold = true): Promise<PageFor<Q>> { return this.which.fetch(q, hold); }
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  dispose(): void {
    for (const u of this.unsubs) u();
    this.here.dispose();
    this.there.dispose();
    this.listeners.clear();
  }
}

/** The key a page is held under: its query as JSON, keys sorted, unset fields left out. */
export function pageKey(q: unknown): string {
  if (Array.isArray(q)) return `[${q.map(pageKey).join(",")}]`;
  if (q && typeof q === "object") {
    const o = q as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined && o[k] !== null && o[k] !== "").map((k) => `${JSON.stringify(k)}:${pageKey(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(q);
}

/** What a session was busy with: every bar's span (requests, tool calls; an open one up to
 *  `now`), each turn's start and end; merged (pages/stats.py busy_spans). */
export function busySpans(stats: SessionStats, now: number): [number, number][] {
  const spans: [number, number][] = [];
  for (const r of stats.requests) spans.push([r.sentTime, r.endTime ?? Math.max(now, r.sentTime)]);
  for (const c of stats.tools) spans.push([c.startTime, c.endTime ?? Math.max(now, c.startTime)]);
  for (const t of stats.turns) {
    spans.push([t.startTime, t.startTime]);
    if (t.endTime !== null) spans.push([t.endTime, t.endTime]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const merged: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) { if (b > last[1]) last[1] = b; } else merged.push([a, b]);
  }
  return merged;
}
