// The event list's query (data/pages.ts `rows`): a filter with only the fields that filter set.
import type { RowFilter, RowsQuery } from "../wire.gen";

export const ROW_FILTER_NONE: RowFilter = { type: null, turn: null, tool: null, text: "" };

/** The `rows` query of `filter` from `offset`; with `seq`, the page that holds that event. */
export function rowsQuery(filter: RowFilter, offset: number, limit: number, seq?: number): RowsQuery {
  const f: RowFilter = {};
  if (filter.type) f.type = filter.type;
  if (filter.turn !== null && filter.turn !== undefined) f.turn = filter.turn;
  if (filter.tool) f.tool = filter.tool;
  if (filter.text && filter.text.trim()) f.text = filter.text;
  const q: RowsQuery = { kind: "rows", filter: f, offset, limit };
  if (seq !== undefined) q.seq = seq;
  return q;
}
