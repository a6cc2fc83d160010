// The loop widget's window of a long session (issue 38 items 1–2): the events it draws from.
//
// While the widget's fold holds the whole session, the loop draws from the fold, as it always did.
// Once the fold holds only a window (the follow's last `window` events of a long session), the
// loop draws from one *part* of the session at a time — an array indexed by seq that holds nothing
// below its first seq:
// - live: the fold's window (what a running session does now);
// - a part read from the kernel around the call the learner went to: PART events of the
//   unfiltered rows pages (`session/page`, the inspector's pages: no other paging), kept here
//   only, one part at a time.
// The session's calls are its tool/call events, numbered in log order as the kernel's rows pages
// list them (filtered by type: the index alone, no figures): the scrubber spans all of them, and
// a call outside the part is found there and its part read. What the loop shows of the rest of the session — the history at a
// seq, a frozen request's messages, what it adds, the totals — comes from the same pages.
import type { ClientSessionModel } from "../fold";
import type { SessionEvent } from "../types";
import type { RowFilter, RowsPage } from "../wire.gen";
import type { PageFor, PageQuery, PageSource } from "./pages";

/** The pages the window reads: a panel's (`get`, `fetch`) and the kernel's whatever the fold holds. */
export interface WindowPages extends Pick<PageSource, "get" | "fetch"> {
  kernel<Q extends PageQuery>(q: Q, hold?: boolean): Promise<PageFor<Q>>;
}
import { ROW_FILTER_NONE, rowsQuery } from "./rows";

/** Events a part holds (one rows page). */
export const PART = 1000;
/** Of them, before the seq a part is read around (playing forward is the usual way on). */
export const BEFORE = 250;

/** The rows of the session's calls: its tool/call events. */
const CALLS: RowFilter = { ...ROW_FILTER_NONE, type: "tool/call" };

/** What a call of the session is: its tool/call's seq and turn (its row of the kernel's list). */
export interface SessionCall { number: number; seq: number; turn: number }

/** An array of `events` indexed by seq, nothing held below `lo` (`lo` .. the last event). */
export function bySeq(lo: number, events: readonly SessionEvent[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  out.length = lo;
  for (const ev of events) out[ev.seq] = ev;
  return out;
}

export class LoopWindow {
  /** The part read from the kernel (null: drawing from the fold: all of it, or its live window). */
  part: { lo: number; hi: number; events: SessionEvent[] } | null = null;
  /** The seq a part is being read around (null: none). */
  reading: number | null = null;
  private live: { key: string; events: SessionEvent[] } | null = null;
  private token = 0;
  private early: Promise<RowsPage> | null = null;

  constructor(private readonly fold: ClientSessionModel, private readonly pages: WindowPages) {}

  /** Start reading the session's first part now, before the follow's snapshot says whether the
   *  fold will hold all of it (a replay of a saved log starts at its first call): `readAround(0)`
   *  then takes it. */
  readStart(): void {
    if (!this.early) this.early = this.pages.kernel(rowsQuery(ROW_FILTER_NONE, 0, PART), false) as Promise<RowsPage>;
    this.early.catch(() => undefined);
  }

  /** The fold holds a window of the session, not all of it: the loop draws from parts. */
  get windowed(): boolean { return !this.fold.whole; }

  /** The events to draw from, indexed by seq: the part read, else the fold's (whole or window). */
  events(): readonly SessionEvent[] {
    if (!this.windowed) return this.fold.events;
    if (this.part) return this.part.events;
    const f = this.fold;
    const key = `${f.start}:${f.cursor}:${f.events.length}`;
    if (this.live?.key !== key) this.live = { key, events: bySeq(f.start + 1, f.events) };
    return this.live.events;
  }

  /** The first seq held (0 for a whole session). */
  get lo(): number { return this.part ? this.part.lo : this.windowed ? this.fold.start + 1 : 0; }
  /** The last seq held. */
  get hi(): number { return this.part ? this.part.hi : this.fold.cursor; }
  /** The session has events before / after what is held. */
  get moreBefore(): boolean { return this.lo > 0; }
  get moreAfter(): boolean { return this.hi < this.fold.cursor; }

  /** Read the part around `seq` (`back`: the part that ends there, stepping back) — unless the
   *  fold's window holds it, which is then drawn from. Resolves true once it is drawn from (false:
   *  a later read replaced this one). */
  async readAround(seq: number, back = false): Promise<boolean> {
    const token = ++this.token;
    const n = this.fold.cursor + 1;
    const from = back ? seq - PART + BEFORE : seq - BEFORE;
    // the fold's window holds what would be read (it runs to the session's end): drawn from instead
    if (!this.windowed || from > this.fold.start) { this.part = null; this.reading = null; return true; }
    const offset = Math.max(0, Math.min(from, n - PART));
    this.reading = seq;
    const early = offset === 0 ? this.early : null;
    this.early = null;
    try {
      const page = await (early ?? this.pages.kernel(rowsQuery(ROW_FILTER_NONE, offset, PART), false) as Promise<RowsPage>);
      if (token !== this.token) return false;
      const rows = page.rows ?? [];
      const events = bySeq(page.offset, rows.map((r) => r.event as SessionEvent));
      this.part = { lo: page.offset, hi: page.offset + rows.length - 1, events };
      return true;
    } finally {
      if (token === this.token) this.reading = null;
    }
  }

  /** Draw from the fold again (live). */
  toLive(): void {
    this.cancel();
    this.part = null;
  }

  /** A read under way is not drawn from when it arrives (the position moved on meanwhile). */
  cancel(): void {
    this.token += 1;
    this.reading = null;
  }

  // -- the session's calls: its tool/call events, listed by the kernel ----------------------------

  /** How many calls the session has (undefined while the kernel lists them; a whole session's
   *  calls are the loop's own). */
  callTotal(): number | undefined {
    if (!this.windowed) return undefined;
    return (this.pages.get(rowsQuery(CALLS, 0, 1)) as RowsPage | undefined)?.total;
  }

  /** The session's number (0-based) of the call whose tool/call is at `seq` (undefined while it comes). */
  callNumber(seq: number): number | undefined {
    if (!this.windowed) return undefined;
    return (this.pages.get(rowsQuery(CALLS, 0, 1, seq)) as RowsPage | undefined)?.index ?? undefined;
  }

  /** The session's call `number`: its tool/call's seq and turn. */
  async call(number: number): Promise<SessionCall | null> {
    const p = await this.pages.fetch(rowsQuery(CALLS, Math.max(0, number), 1)) as RowsPage;
    const row = (p.rows ?? [])[0];
    return row ? { number: p.offset, seq: row.event.seq, turn: Number(row.turn ?? 0) } : null;
  }
}
