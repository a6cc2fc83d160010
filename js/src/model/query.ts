// The event query language of the inspector's search box: the twin of the Python module
// dsh_notebook.pages.query (the same syntax as `show --search` and `sessions --search`). Terms
// separated by spaces, all must match: type:tool/result (type:tool = every tool/… type), name:bash
// (or tool:bash), exit:1 / exit:!0, turn:3, seq:40 / seq:40..60, and free text ("a phrase" or bare
// words, case-insensitive). A word whose prefix is no field is text; a bad value (turn:x) is a
// BAD_QUERY error.
import { messageOf, type SessionEvent } from "../types";

export interface Query {
  types: string[]; names: string[]; exits: [boolean, number][]; turns: number[]; seqs: [number, number][]; texts: string[];
}
export type Parsed = { ok: true; query: Query } | { ok: false; error: string };

const FIELDS = new Set(["type", "name", "tool", "exit", "turn", "seq"]);
const TOKEN = /(?:(\w+):)?(?:"((?:[^"\\]|\\.)*)"?|(\S+))/g;

export function emptyQuery(q: Query): boolean {
  return !(q.types.length || q.names.length || q.exits.length || q.turns.length || q.seqs.length || q.texts.length);
}

class BadQuery extends Error {}

function int(key: string, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim())) throw new BadQuery(`BAD_QUERY: ${key}: needs a whole number, not '${raw}'`);
  return Number(raw);
}

export function parseQuery(text: string): Parsed {
  const q: Query = { types: [], names: [], exits: [], turns: [], seqs: [], texts: [] };
  try {
    for (const m of text.matchAll(TOKEN)) {
      let key = m[1] as string | undefined;
      const quoted = m[2] as string | undefined;
      let value = (quoted !== undefined ? quoted.replace(/\\"/g, '"') : m[3]) ?? "";
      if (key && !FIELDS.has(key.toLowerCase())) { value = m[0].replace(/^"+|"+$/g, ""); key = undefined; }
      if (!key) {
        const word = quoted !== undefined ? value : value.replace(/\*+$/, "");
        if (word) q.texts.push(word.toLowerCase());
        continue;
      }
      key = key.toLowerCase();
      if (!value) throw new BadQuery(`BAD_QUERY: ${key}: needs a value`);
      if (key === "type") q.types.push(value);
      else if (key === "name" || key === "tool") q.names.push(value.toLowerCase());
      else if (key === "exit") { const neg = value.startsWith("!"); q.exits.push([!neg, int(key, neg ? value.slice(1) : value)]); }
      else if (key === "turn") q.turns.push(int(key, value));
      else if (value.includes("..")) {
        const [lo, hi] = value.split("..", 2);
        q.seqs.push([lo ? int(key, lo) : 0, hi ? int(key, hi) : Number.MAX_SAFE_INTEGER]);
      } else q.seqs.push([int(key, value), int(key, value)]);
    }
  } catch (e) {
    if (e instanceof BadQuery) return { ok: false, error: e.message };
    throw e;
  }
  return { ok: true, query: q };
}

/** The text free-text terms are looked for in, and snippets cut from. */
export function eventText(ev: SessionEvent): string {
  if (ev.type === "tool/call") return `${ev.name} ${ev.arguments}`;
  const m = messageOf(ev);
  const content = m && Array.isArray(m.content) ? m.content : undefined;
  if (content) {
    const parts: string[] = [];
    for (const b of content) {
      if (b.type === "text") parts.push(b.text);
      else if (b.type === "tool-call") parts.push(`${b.name} ${b.arguments}`);
    }
    const text = parts.filter(Boolean).join("\n");
    if (text) return text;
  }
  const { seq: _s, time: _t, ...rest } = ev;
  return JSON.stringify(rest);
}

export function exitCode(ev: SessionEvent): number | undefined {
  const code = ev.type === "tool/result" ? ev.meta?.exitCode : undefined;
  return typeof code === "number" ? code : undefined;
}

/** Does `ev` (of turn `turn`, about tool `tool`) match `q`? `lowText` is its eventText, lowercased. */
export function matchEvent(q: Query, ev: SessionEvent, turn: number | undefined, tool: string | undefined, lowText: () => string): boolean {
  if (q.types.some((t) => ev.type !== t && !ev.type.startsWith(`${t.replace(/\/$/, "")}/`))) return false;
  if (q.names.length && (!tool || q.names.some((n) => tool.toLowerCase() !== n))) return false;
  if (q.exits.length) { const c = exitCode(ev); if (q.exits.some(([eq, n]) => c === undefined || (c === n) !== eq)) return false; }
  if (q.turns.some((t) => turn !== t)) return false;
  if (q.seqs.some(([lo, hi]) => ev.seq < lo || ev.seq > hi)) return false;
  if (q.texts.length) { const low = lowText(); return q.texts.every((t) => low.includes(t)); }
  return true;
}

export interface Snippet { text: string; marks: [number, number][] }

/** A one-line excerpt around the first hit and the spans of every hit in it. */
export function snippetOf(text: string, terms: string[], width = 60): Snippet {
  const flat = text.split(/\s+/).filter(Boolean).join(" ");
  const low = flat.toLowerCase();
  const found = terms.map((t) => (t ? low.indexOf(t) : -1)).filter((i) => i >= 0);
  const first = found.length ? Math.min(...found) : 0;
  const start = first < Math.floor(width / 2) ? 0 : first - Math.floor(width / 3);
  const end = Math.min(flat.length, start + width + terms.reduce((n, t) => n + t.length, 0));
  const cut = `${start ? "…" : ""}${flat.slice(start, end)}${end < flat.length ? "…" : ""}`;
  return { text: cut, marks: spans(cut.toLowerCase(), terms) };
}

/** The spans of every hit of `terms` (lowercase) in `text`, merged where they overlap. */
export function markSpans(text: string, terms: string[]): [number, number][] {
  return spans(text.toLowerCase(), terms);
}

function spans(low: string, terms: string[]): [number, number][] {
  const all: [number, number][] = [];
  for (const t of terms) {
    if (!t) continue;
    for (let i = low.indexOf(t); i >= 0; i = low.indexOf(t, i + t.length)) all.push([i, i + t.length]);
  }
  all.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of all) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b); else merged.push([a, b]);
  }
  return merged;
}

const CSV_COLUMNS = ["seq", "time", "turn", "type", "name", "exit", "snippet"];
const csvCell = (v: unknown): string => { const s = v === undefined || v === null ? "" : String(v); return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s; };

export interface ExportRow { ev: SessionEvent; turn: number | undefined; tool: string | undefined; snippet: string }

/** An event's `time` (epoch ms) in ISO 8601 UTC to the millisecond, as `show --export csv` writes it. */
export function isoTime(ms: unknown): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return ms === undefined || ms === null ? "" : String(ms);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString();
}

/** The header line and one line per row of the CSV export (the columns of `show --export csv`). */
export const CSV_HEADER = `${CSV_COLUMNS.join(",")}\n`;
export function csvLine(r: ExportRow): string {
  return `${[r.ev.seq, isoTime(r.ev.time), r.turn, r.ev.type, r.tool, exitCode(r.ev), r.snippet].map(csvCell).join(",")}\n`;
}

/** The rows as JSON lines (the events themselves) or CSV (the same columns as `show --export csv`). */
export function exportRows(rows: ExportRow[], format: "jsonl" | "csv"): string {
  if (format === "jsonl") return rows.map((r) => `${JSON.stringify(r.ev)}\n`).join("");
  return CSV_HEADER + rows.map(csvLine).join("");
}
