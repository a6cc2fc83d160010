// External agents' calls (issue 41): an agent outside Jupyter (Claude Code, Codex, Cursor) drove
// this notebook over MCP. Each call is `external/call` … `external/result` in the session; this
// fold turns them into rows the loop widget draws in the external agent's own colour.
import { isCode, type SessionEvent } from "../types";

export type ExternalStatus = "running" | "waiting" | "done" | "error" | "refused";

export interface ExternalCallRow {
  callId: string;
  seq: number;
  tool: string;
  client: string;
  mcpSessionId: string | null;
  notebook: string | null;
  turn: number | null;
  /** What it asked for, in one line (the code, the cell's source, the variable …). */
  summary: string;
  status: ExternalStatus;
  /** The result's first lines (masked, as logged), or the refusal's reason. */
  result: string;
  resultSeq: number | null;
  /** Decided by: mode, rule, user … (`approval/decided`). */
  decision: string | null;
}

function argsOf(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const oneLine = (s: string, n = 120): string => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

export function summaryOf(tool: string, args: string): string {
  const a = argsOf(args);
  const str = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : "");
  switch (tool) {
    case "execute_code": return oneLine(str("code"));
    case "insert_cell": return oneLine(`${str("cell_id") ? `after ${str("cell_id")}: ` : ""}${str("source")}`);
    case "edit_cell": return oneLine(`${str("cell_id")}: ${str("source")}`);
    case "inspect_var": return str("name");
    case "ask_agent": return oneLine(str("prompt"));
    case "read_notebook": return Array.isArray(a.cell_ids) ? `cells ${(a.cell_ids as unknown[]).join(", ")}` : "all cells";
    case "session_events": return `after seq ${String(a.since_seq ?? -1)}`;
    default: return oneLine(args);
  }
}

/** The external calls of `events`, in call order; `waiting`: call ids a person is asked about now. */
export function externalCalls(events: readonly SessionEvent[], waiting: ReadonlySet<string> = new Set()): ExternalCallRow[] {
  const rows = new Map<string, ExternalCallRow>();
  for (const ev of events) {
    if (ev.type === "external/call") {
      const client = ev.client.version ? `${ev.client.name} ${ev.client.version}` : ev.client.name;
      rows.set(ev.callId, { callId: ev.callId, seq: ev.seq, tool: ev.tool, client, mcpSessionId: ev.mcpSessionId ?? null,
        notebook: ev.notebook ?? null, turn: ev.turn ?? null, summary: summaryOf(ev.tool, ev.arguments),
        status: "running", result: "", resultSeq: null, decision: null });
    } else if (ev.type === "approval/decided") {
      const row = rows.get(ev.callId);
      if (row) row.decision = `${ev.decision} · ${ev.decider ?? ev.by ?? "?"}${ev.mode ? ` (mode ${ev.mode})` : ""}`;
    } else if (ev.type === "external/result") {
      const row = rows.get(ev.callId);
      if (!row) continue;
      const text = (ev.content ?? []).map((p) => (p.type === "image" ? `[image ${p.mimeType ?? ""}]` : p.text ?? "")).join("\n");
      row.resultSeq = ev.seq;
      row.result = oneLine(text, 240);
      row.status = isCode(ev.error?.code, "DENIED") ? "refused" : ev.isError ? "error" : "done";
    }
  }
  const out = [...rows.values()];
  for (const row of out) if (row.status === "running" && waiting.has(row.callId)) row.status = "waiting";
  return out;
}

/** The client of an external call, or null (the approval banner names who waits). */
export function externalClientOf(events: readonly SessionEvent[], callId: string): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.type === "external/call" && ev.callId === callId) return ev.client.name;
  }
  return null;
}
