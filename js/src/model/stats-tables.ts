// The `show --stats` tables in the browser: the same cells, titles and text as
// dsh_notebook/analysis/stats_view.py (`format_stats`) over the JS trajectory fold's figures
// (model/trajectory.ts — the one cost computation, model/pricing.ts). The inspector draws them as
// HTML tables; `formatStats` gives the CLI's exact text (tests/client/test_stats_tables_parity.py).
import { fmtInt } from "./counts";
import type { ModeDecisions, RequestStats, SessionStats, Totals, ToolStats, TurnStats } from "./trajectory";

/** Python's `f"{x:.{d}f}"` for x >= 0: JS rounds an exact tie up, Python to even. */
export function pyFixed(x: number, d: number): string {
  const full = x.toFixed(100);
  const dot = full.indexOf(".");
  if (/^50*$/.test(full.slice(dot + 1 + d))) {
    const kept = full.slice(0, dot + 1 + d);
    const last = Number(d ? kept[kept.length - 1] : full[dot - 1]);
    if (last % 2 === 0) return d ? kept : full.slice(0, dot);
  }
  return x.toFixed(d);
}

export const fmtStatMs = (ms: number | null): string =>
  ms === null ? "-" : ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${pyFixed(ms / 1000, 2)} s`
    : `${Math.floor(ms / 60_000)}m${pyFixed((ms % 60_000) / 1000, 1).padStart(4, "0")}s`;
export const fmtTokens = (n: number | null): string => (n === null ? "-" : n >= 10_000 ? `${pyFixed(n / 1000, 1)}k` : fmtInt(n));
export const fmtCost = (usd: number | null): string => (usd === null ? "cost n/a" : usd < 1 ? `$${pyFixed(usd, 4)}` : `$${pyFixed(usd, 2)}`);
export const fmtFraction = (f: number | null): string => (f === null ? "-" : `${pyFixed(f * 100, 1)}%`);
const costCell = (usd: number | null) => fmtCost(usd).replace("cost n/a", "n/a");

/** `allow by mode (plan)`: a call's decision, what made it, in which mode (stats_view._decided). */
function decided(t: ToolStats): string {
  if (t.decision === null) return "-";
  return `${t.decision} by ${t.decider || "?"}${t.mode ? ` (${t.mode})` : ""}`;
}

function toolResult(t: ToolStats): string {
  if (t.endTime === null) return "open";
  return t.error || (t.exitCode !== null ? `exit ${t.exitCode}` : "ok");
}

/** `2.41 s · 3 requests · 1.2k in / 310 out tokens · $0.0012 · context 4.1%` (stats_view.summary_line). */
export function summaryLine(t: Totals): string {
  const parts = [fmtStatMs(t.durationMs), `${t.requests} request${t.requests !== 1 ? "s" : ""}`];
  if (t.toolCalls) parts.push(`${t.toolCalls} tool call${t.toolCalls !== 1 ? "s" : ""}`);
  let tokens = `${fmtTokens(t.inputTokens)} in / ${fmtTokens(t.outputTokens)} out tokens`;
  if (t.cachedInputTokens) tokens += ` (${fmtTokens(t.cachedInputTokens)} cached)`;
  parts.push(tokens, fmtCost(t.costUsd));
  if (t.contextUsed !== null) parts.push(`context ${fmtFraction(t.contextUsed)}`);
  if (t.contextWindow && t.windowSource) parts.push(`window ${fmtTokens(t.contextWindow)} (${t.windowSource})`);
  return parts.join(" · ");
}

export interface StatsTable { title: string; head: string[]; rows: string[][]; right: number[]; seqs: number[] }

/** One table of `show --stats`: its name in a `stats` page query (`table`), its caption (`title`,
 *  the CLI's), its head, which columns are right-aligned, each row's cells. */
export interface TableSpec<R> { table: StatsPageTable; title: string; head: string[]; right: number[]; cells(row: R): string[] }
export type StatsPageTable = "requests" | "tools" | "turns" | "decisions";

export const REQUESTS_TABLE: TableSpec<RequestStats> = {
  table: "requests", title: "requests",
  head: ["SEQ", "T.S.A", "MODEL", "OUTCOME", "1ST BYTE", "TTFT", "DURATION", "IN", "CACHED", "OUT", "COST", "CONTEXT"],
  right: [0, 4, 5, 6, 7, 8, 9, 10, 11],
  cells: (r) => [String(r.seq), `${r.turn}.${r.step}.${r.attempt}`, `${r.provider}:${r.model}`, r.outcome + (r.error ? ` ${r.error}` : ""),
    fmtStatMs(r.firstByteMs), fmtStatMs(r.ttftMs), fmtStatMs(r.durationMs), fmtTokens(r.inputTokens), fmtTokens(r.cachedInputTokens),
    fmtTokens(r.outputTokens), r.inputTokens === null ? "-" : costCell(r.costUsd), fmtFraction(r.contextUsed)],
};
export const TOOLS_TABLE: TableSpec<ToolStats> = {
  table: "tools", title: "tools", head: ["SEQ", "T.S", "CALL", "NAME", "DURATION", "APPROVAL WAIT", "APPROVAL", "DECIDED", "RESULT"],
  right: [0, 4, 5],
  cells: (t) => [String(t.seq), `${t.turn}.${t.step}`, t.callId, t.name, fmtStatMs(t.durationMs), fmtStatMs(t.approvalWaitMs),
    t.approval || "-", decided(t), toolResult(t)],
};
export const TURNS_TABLE: TableSpec<TurnStats> = {
  table: "turns", title: "turns", head: ["TURN", "REASON", "STEPS", "REQUESTS", "TOOLS", "DURATION", "IN", "OUT", "COST", "CONTEXT"],
  right: [0, 2, 3, 4, 5, 6, 7, 8, 9],
  cells: (t) => [String(t.turn), t.reason || "running", String(t.steps.length), String(t.requests), String(t.toolCalls),
    fmtStatMs(t.durationMs), fmtTokens(t.inputTokens), fmtTokens(t.outputTokens), costCell(t.costUsd), fmtFraction(t.contextUsed)],
};
/** Decisions by permission mode: a row per mode, no event of its own (its seq: -1, no link). */
export const DECISIONS_TABLE: TableSpec<ModeDecisions> = {
  table: "decisions", title: "decisions by mode",
  head: ["MODE", "DECISIONS", "ALLOW", "DENY", "CANCELLED", "ASKED", "BY RULE", "BY GRANT", "BY MODE", "BY USER"],
  right: [1, 2, 3, 4, 5, 6, 7, 8, 9],
  cells: (d) => [d.mode, d.decisions, d.allow, d.deny, d.cancelled, d.asked, d.byRule, d.byGrant, d.byMode, d.byUser].map(String),
};
/** The tables in the order `show --stats` prints them. */
export const STATS_TABLES = [REQUESTS_TABLE, TOOLS_TABLE, TURNS_TABLE, DECISIONS_TABLE] as readonly TableSpec<never>[];

/** The four tables of `show --stats` (requests, tools, turns, decisions by mode); `seqs`: the
 *  event of each row (a mode's row: none, -1). */
export function statsTables(stats: SessionStats): StatsTable[] {
  const table = <R>(spec: TableSpec<R>, rows: R[]): StatsTable =>
    ({ title: spec.title, head: spec.head, right: spec.right, rows: rows.map(spec.cells),
      seqs: rows.map((r) => (typeof (r as { seq?: unknown }).seq === "number" ? (r as { seq: number }).seq : -1)) });
  return [table(REQUESTS_TABLE, stats.requests), table(TOOLS_TABLE, stats.tools), table(TURNS_TABLE, stats.turns),
    table(DECISIONS_TABLE, stats.decisions)];
}

/** What the requests carried, one line per change (stats_view.sent_lines). */
export function sentLines(stats: SessionStats): string[] {
  const out: string[] = [];
  let last: string | null = null;
  for (const r of stats.requests) {
    const options = Object.entries(r.options).map(([k, v]) => `${k}=${pyJson(v)}`).join(" ");
    const now = JSON.stringify([r.maxTokens, options]);
    if (now !== last && (r.maxTokens !== null || options)) {
      const limit = r.maxTokens !== null ? `max_tokens=${r.maxTokens}` : "no max_tokens";
      out.push(`  sent from ${r.turn}.${r.step}.${r.attempt}: ${limit}${options ? ` ${options}` : ""}`);
    }
    last = now;
  }
  return out;
}

/** `json.dumps(v, ensure_ascii=False)`: ", " and ": " between items. */
function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(", ")}]`;
  if (v && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(", ")}}`;
  return JSON.stringify(v ?? null);
}

function textTable(t: StatsTable): string[] {
  if (!t.rows.length) return [t.title, "  (none)"];
  const widths = t.head.map((hd, i) => Math.max(hd.length, ...t.rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (t.right.includes(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  return [t.title, line(t.head), ...t.rows.map(line)];
}

/** `show --stats` as text, exactly as the CLI prints it. */
export function formatStats(stats: SessionStats): string {
  const [reqs, tools, turns, modes] = statsTables(stats);
  const lines = [...textTable(reqs), ...sentLines(stats), "", ...textTable(tools), "", ...textTable(turns), "", ...textTable(modes), "",
    `total: ${summaryLine(stats.totals)}  (prices as of ${stats.totals.pricesAsOf})`];
  return `${lines.join("\n")}\n`;
}
