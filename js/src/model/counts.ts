// "N events": the last seq folded + 1 — the one definition every view uses (the cell's summary
// line, `%dsh sessions`, `show`: dsh_notebook/client/summary.py `event_count`). The header line
// of the log is not an event.
export const eventCount = (cursor: number): number => Math.max(0, cursor + 1);
