// The pages of a session computed in the browser, from a fold that holds the whole session (a
// window as large as the session: a short log, an exported page) — the twin of
// dsh_notebook/pages/, the same pages for the same log (tests/client/test_pages_parity.py
// checks them on recorded runs). Each is computed from the fold's events when asked and kept
// until the session grows.
import type { ClientSessionModel } from "../fold";
import { resolveMessageSeqs } from "../model/diff";
import { deriveMessages, messagesOfSeqs } from "../model/history";
import { ProvenanceIndex } from "../model/provenance";
import type { Pricing } from "../model/pricing";
import { csvLine, CSV_HEADER, eventText, snippetOf, type ExportRow } from "../model/query";
import { sentLines, type StatsPageTable } from "../model/stats-tables";
import { EventFilter } from "../model/summary";
import { TrajectoryFold, type SessionStats } from "../model/trajectory";
import { approvalSeqs, durationsBySeq } from "../model/waterfall";
import type { SessionEvent } from "../types";
import type {
  DiffItem, ExportPage, Facets, MessagesPage, RequestDiffPage, Row, RowFilter, RowsPage, StatsPage, TimelinePage,
  TimelineRow, TurnPage,
} from "../wire.gen";
import { busySpans, type PageFor, type PageQuery, type PageSource } from "./pages";

type Json = { [k: string]: unknown };
interface Listing { n: number; rows: number[]; error: string; terms: string[] }

export class LocalPages implements PageSource {
  readonly local = true;
  readonly error = "";
  private readonly filterer = new EventFilter();
  private readonly prov = new ProvenanceIndex();
  private readonly traj: TrajectoryFold;
  private readonly listings = new Map<string, Listing>();
  private figures: { n: number; stats: SessionStats; durations: Map<number, number> } | null = null;
  private modeSeen: { n: number; mode: string | null } = { n: 0, mode: null };

  constructor(private readonly fold: ClientSessionModel, pricing: Pricing) {
    this.traj = new TrajectoryFold(pricing);
  }

  get<Q extends PageQuery>(q: Q): PageFor<Q> { return this.compute(q) as PageFor<Q>; }
  fetch<Q extends PageQuery>(q: Q): Promise<PageFor<Q>> { return Promise.resolve(this.get(q)); }
  onChange(): () => void { return () => undefined; } // computed when asked: nothing arrives later
  dispose(): void { this.listings.clear(); }

  private get events(): readonly SessionEvent[] { return this.fold.events; }

  private compute(q: PageQuery): unknown {
    switch (q.kind) {
      case "rows": return this.rows(q.filter ?? {}, q.offset ?? 0, q.limit ?? 100, q.seq ?? null);
      case "facets": return this.facets();
      case "stats": return this.stats(q.table, q.offset ?? 0, q.limit ?? 100, q.seq ?? null);
      case "timeline": return this.timeline(q.offset ?? 0, q.limit ?? 100, q.bar ?? null, q.seq ?? null, Boolean(q.axis));
      case "turn": return this.turn(q.turn ?? null, q.seq ?? null);
      case "request-diff": return this.requestDiff(q.seq, q.offset ?? 0, q.limit ?? 200);
      case "messages": return this.messages(q.seq, Boolean(q.request), q.offset ?? null, q.limit ?? 150);
      case "export": return this.exportPart(q.filter ?? {}, q.format, q.offset ?? 0, q.limit ?? 10_000);
    }
  }

  /** ``show --stats`` of the events and the durations column (kept until the session grows). */
  private figuresNow(): { stats: SessionStats; durations: Map<number, number> } {
    const n = this.events.length;
    if (!this.figures || this.figures.n !== n) {
      this.traj.update(this.events);
      this.figures = { n, stats: this.traj.stats(), durations: durationsBySeq(this.traj, approvalSeqs(this.events)) };
    }
    return this.figures;
  }

  private listing(f: RowFilter): Listing {
    const key = JSON.stringify([f.type ?? "", f.turn ?? null, f.tool ?? "", f.text ?? ""]);
    const n = this.events.length;
    const hit = this.listings.get(key);
    if (hit && hit.n === n) return hit;
    const rows = this.filterer.apply(this.events, { type: f.type ?? "", turn: f.turn === null || f.turn === undefined ? "" : String(f.turn),
      tool: f.tool ?? "", text: f.text ?? "" });
    const found = { n, rows, error: this.filterer.error, terms: this.filterer.terms };
    this.listings.set(key, found);
    if (this.listings.size > 6) this.listings.delete(this.listings.keys().next().value as string);
    return found;
  }

  private rows(f: RowFilter, offset: number, limit: number, seq: number | null): RowsPage {
    const found = this.listing(f);
    const events = this.events;
    this.prov.update(events);
    let index: number | null = null;
    if (seq !== null) {
      const i = found.rows.indexOf(seq);
      if (i >= 0) { index = i; offset = Math.max(0, i - Math.floor(limit / 2)); }
    }
    offset = found.rows.length ? Math.min(offset, found.rows.length - 1) : 0;
    const { durations } = this.figuresNow();
    const rows: Row[] = found.rows.slice(offset, offset + limit).map((i) => {
      const ev = events[i];
      const row: Row = { event: ev, turn: this.filterer.turnOf(i) ?? null, tool: this.filterer.toolAt(i) ?? null,
        durationMs: durations.get(i) ?? null, citedBy: this.prov.citing(i) };
      if (found.terms.length) row.snippet = { text: snippetOf(eventText(ev), found.terms).text };
      return row;
    });
    return { kind: "rows", count: events.length, total: found.rows.length, offset, index, rows, terms: found.terms,
      error: found.error || null, partial: false };
  }

  /** The mode of the last mode/changed, null when none (pages/indexed.py SessionPages.mode). */
  private modeNow(): string | null {
    const events = this.events;
    if (events.length < this.modeSeen.n) this.modeSeen = { n: 0, mode: null }; // the fold was reset
    for (let i = this.modeSeen.n; i < events.length; i++) {
      const ev = events[i];
      if (ev.type === "mode/changed") this.modeSeen.mode = ev.mode;
    }
    this.modeSeen.n = events.length;
    return this.modeSeen.mode;
  }

  private facets(): Facets {
    const o = this.filterer.options(this.events);
    return { kind: "facets", count: this.events.length, types: o.types, tools: o.tools, turns: o.turns, mode: this.modeNow() };
  }

  private stats(table: StatsPageTable, offset: number, limit: number, seq: number | null): StatsPage {
    const { stats } = this.figuresNow();
    const all = stats[table] as unknown as { seq?: number }[]; // a decisions row (a mode's) has no seq
    let index: number | null = null;
    if (seq !== null) {
      const i = all.findIndex((r) => r.seq === seq);
      if (i >= 0) { index = i; offset = Math.max(0, i - Math.floor(limit / 2)); }
    }
    return { kind: "stats", count: this.events.length, table, total: all.length, offset, index,
      rows: all.slice(offset, offset + limit) as unknown as Json[] as StatsPage["rows"], totals: stats.totals as unknown as StatsPage["totals"],
      sent: sentLines(stats) };
  }

  private timelineRows(stats: SessionStats): { rows: TimelineRow[]; barRows: number[]; rowOfSeq: Map<number, number> } {
    const byTurn = new Map<number, { start: number; seq: number; row: TimelineRow }[]>();
    const add = (turn: number, start: number, seq: number, row: TimelineRow) => {
      const l = byTurn.get(turn) ?? [];
      l.push({ start, seq, row });
      byTurn.set(turn, l);
    };
    for (const r of stats.requests) add(r.turn, r.sentTime, r.seq, { kind: "request", stats: r as unknown as TimelineRow["stats"] });
    for (const c of stats.tools) add(c.turn, c.startTime, c.seq, { kind: "tool", stats: c as unknown as TimelineRow["stats"] });
    const rows: TimelineRow[] = [];
    const barRows: number[] = [];
    const rowOfSeq = new Map<number, number>();
    for (const t of stats.turns) {
      if (!rowOfSeq.has(t.seq)) rowOfSeq.set(t.seq, rows.length);
      rows.push({ kind: "turn", stats: t as unknown as TimelineRow["stats"] });
      for (const b of (byTurn.get(t.turn) ?? []).sort((x, y) => x.start - y.start || x.seq - y.seq)) {
        rowOfSeq.set(b.seq, rows.length);
        barRows.push(rows.length);
        rows.push({ ...b.row, bar: barRows.length - 1 });
      }
    }
    return { rows, barRows, rowOfSeq };
  }

  private timeline(offset: number, limit: number, bar: number | null, seq: number | null, axis: boolean): TimelinePage {
    const { stats } = this.figuresNow();
    const tl = this.timelineRows(stats);
    let index: number | null = null;
    if (bar !== null && bar < tl.barRows.length) index = tl.barRows[bar];
    else if (seq !== null) index = tl.rowOfSeq.get(seq) ?? null;
    if (index !== null) offset = Math.max(0, index - Math.floor(limit / 2));
    const now = this.events[this.events.length - 1]?.time ?? 0;
    return { kind: "timeline", count: this.events.length, total: tl.rows.length, bars: tl.barRows.length, offset, index,
      rows: tl.rows.slice(offset, offset + limit), busy: axis ? busySpans(stats, now) : null,
      totals: stats.totals as unknown as TimelinePage["totals"] };
  }

  private turn(turn: number | null, seq: number | null): TurnPage {
    const { stats } = this.figuresNow();
    const turns = stats.turns;
    let k = -1;
    if (turn !== null) k = turns.findIndex((t) => t.turn === turn);
    else if (seq !== null) turns.forEach((t, i) => { if (t.seq <= seq) k = i; });
    if (k < 0 && turns.length && turn === null) k = turns.length - 1;
    const count = this.events.length;
    if (k < 0) return { kind: "turn", count, turn: null, turns: turns.length, first: null, previous: null, next: null, last: null };
    const t = turns[k];
    const calls = new Set(stats.tools.filter((c) => c.turn === t.turn).map((c) => c.callId));
    const seen = approvalSeqs(this.events.slice(t.seq, (t.endSeq ?? count - 1) + 1));
    const approvals = [...seen].filter(([id]) => calls.has(id)).map(([callId, a]) => ({ callId, ...a }));
    return { kind: "turn", count, turn: t as unknown as TurnPage["turn"],
      requests: stats.requests.filter((r) => r.turn === t.turn) as unknown as TurnPage["requests"],
      tools: stats.tools.filter((c) => c.turn === t.turn) as unknown as TurnPage["tools"], approvals,
      turns: turns.length, first: turns[0].turn, previous: k > 0 ? turns[k - 1].turn : null,
      next: k + 1 < turns.length ? turns[k + 1].turn : null, last: turns[turns.length - 1].turn };
  }

  private requestDiff(seq: number, offset: number, limit: number): RequestDiffPage { return requestDiffPageOf(this.events, seq, offset, limit); }
  private messages(seq: number, request: boolean, offset: number | null, limit: number): MessagesPage {
    return messagesPageOf(this.events, seq, request, offset, limit);
  }


  private exportPart(f: RowFilter, format: "jsonl" | "csv", offset: number, limit: number): ExportPage {
    const found = this.listing(f);
    const events = this.events;
    const part = found.rows.slice(offset, offset + limit);
    let text = "";
    if (format === "jsonl") text = part.map((i) => `${JSON.stringify(events[i])}\n`).join("");
    else {
      const rows: ExportRow[] = part.map((i) => ({ ev: events[i], turn: this.filterer.turnOf(i), tool: this.filterer.toolAt(i),
        snippet: snippetOf(eventText(events[i]), found.terms).text }));
      text = (offset === 0 ? CSV_HEADER : "") + rows.map(csvLine).join("");
    }
    return { kind: "export", count: events.length, total: found.rows.length, offset, rows: part.length, text };
  }
}

/** What a message a request adds is (model/diff.ts classifyAdded, the previous request's turn given). */
function classify(ev: SessionEvent | undefined, prevTurn: number | undefined): DiffItem["kind"] {
  if (!ev) return "other";
  switch (ev.type) {
    case "tool/result": return "tool result";
    case "assistant/message": return "assistant";
    case "system/message": return "system";
    case "user/message":
      if (ev.message.source?.kind === "plugin") return "runtime context";
      return prevTurn !== undefined && typeof ev.turn === "number" && ev.turn === prevTurn ? "steering" : "user prompt";
    default: return "other";
  }
}

/** The `request-diff` page of `events` (all of a session's from seq 0, indexed by seq): the twin of
 *  dsh_notebook/pages/requests.py request_diff_page. */
export function requestDiffPageOf(events: readonly SessionEvent[], seq: number, offset: number, limit: number): RequestDiffPage {
  const frozen: number[] = [];
  for (const ev of events) if (ev.type === "request/frozen") frozen.push(ev.seq);
  const isFrozen = events[seq]?.type === "request/frozen";
  const k = frozen.findIndex((s) => (isFrozen ? s >= seq : s > seq));
  if (k < 0) return { kind: "request-diff", count: events.length, fromSeq: null, toSeq: null };
  const to = frozen[k], prev = k > 0 ? frozen[k - 1] : null;
  const after = resolveMessageSeqs(events, to);
  const before = prev !== null ? resolveMessageSeqs(events, prev) : [];
  const had = new Set(before), has = new Set(after);
  const prevTurn = prev !== null ? (events[prev] as { turn?: number }).turn : undefined;
  const added = after.filter((s) => !had.has(s));
  const removed = before.filter((s) => !has.has(s));
  const items: DiffItem[] = [...added, ...removed].slice(offset, offset + limit).map((s) => {
    const ev = events[s];
    const item: DiffItem = { seq: s, kind: has.has(s) ? classify(ev, prevTurn) : "removed", type: ev?.type ?? "?" };
    if (ev) item.event = ev;
    return item;
  });
  return { kind: "request-diff", count: events.length, fromSeq: prev, toSeq: to, kept: after.length - added.length,
    added: added.length, removed: removed.length, offset, items };
}

/** The `messages` page of `events` (all of a session's from seq 0, indexed by seq): the twin of
 *  dsh_notebook/pages/requests.py messages_page. */
export function messagesPageOf(events: readonly SessionEvent[], seq: number, request: boolean, offset: number | null, limit: number): MessagesPage {
  const all = request ? (events[seq]?.type === "request/frozen" ? messagesOfSeqs(events, resolveMessageSeqs(events, seq)) : [])
    : deriveMessages(events, seq);
  const from = offset ?? Math.max(0, all.length - limit);
  return { kind: "messages", count: events.length, seq, total: all.length, offset: from,
    messages: all.slice(from, from + limit).map((d) => ({ seq: d.seq, message: d.message })) };
}
