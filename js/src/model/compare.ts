// The compare widget's data (notebook/widgets/compare.py: comparison_data) and its wording.
import { fmtInt } from "./counts";

export interface CompareSide { seq: number; turn?: number; model: string; messages: number; last: string; responseSeq: number | null; response: string }
export type RowState = "same" | "first" | "after";
export interface CompareRow { turn: number; step: number; state: RowState; a: CompareSide | null; b: CompareSide | null }
export interface Divergence {
  what: "request" | "response" | "missing";
  turn: number;
  step: number;
  a: { seq: number | null; requestSeq: number | null };
  b: { seq: number | null; requestSeq: number | null };
  messageIndex: number | null;
  diff: string[];
}
export interface CompareData {
  a: { sessionId: string; events: number };
  b: { sessionId: string; events: number };
  rows: CompareRow[];
  agreeing: number;
  divergence: Divergence | null;
}

const WHERE: Record<Divergence["what"], (d: Divergence) => string> = {
  request: (d) => `the requests differ at message ${d.messageIndex}`,
  response: () => "the requests agree, the responses differ",
  missing: () => "one session has no such step",
};

const seq = (s: number | null) => (s === null ? "-" : String(s));

/** The one line above the table (the same words as `python -m dsh_notebook compare`). */
export function compareStatus(data: CompareData): string {
  const d = data.divergence;
  if (!d) return `no divergence: the sessions agree on ${data.rows.length === 1 ? "the one step" : `all ${fmtInt(data.rows.length)} steps`}`;
  return `first divergence: A seq ${seq(d.a.seq)}, B seq ${seq(d.b.seq)} (turn ${d.turn} step ${d.step}: ${WHERE[d.what](d)}) · ${data.agreeing} ${data.agreeing === 1 ? "step agrees" : "steps agree"} before it`;
}

/** A unified-diff line's kind: header, hunk, removed (A), added (B), or context. */
export function diffLineKind(line: string): "head" | "hunk" | "del" | "add" | "ctx" {
  if (line.startsWith("---") || line.startsWith("+++")) return "head";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("+")) return "add";
  return "ctx";
}
