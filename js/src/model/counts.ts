// "N events": the last seq folded + 1 — the one definition every view uses (the cell's summary
// line, `%dsh sessions`, `show`: dsh_notebook/client/summary.py `event_count`). The header line
// of the log is not an event.
export const eventCount = (cursor: number): number => Math.max(0, cursor + 1);

/** 12,345: every count a summary shows, with thousands separators (as the token totals; not
 *  toLocaleString, whose first call costs milliseconds). */
export const fmtInt = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** "1 item", "10,000 items": a count and its noun, pluralised (`plural` for irregular ones). */
export const countOf = (n: number, word: string, plural = `${word}s`): string => `${fmtInt(n)} ${n === 1 ? word : plural}`;
