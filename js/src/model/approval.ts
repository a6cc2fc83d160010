// What an approval asks about, read from the call's arguments: the full command (bash), the
// edit as a line diff (old → new), the written file, the code; else the arguments as JSON.

export interface DiffLine { op: "-" | "+" | " "; text: string }
export type ApprovalDetail =
  | { kind: "command"; command: string }
  | { kind: "edit"; path: string; lines: DiffLine[]; replaceAll: boolean }
  | { kind: "write"; path: string; lines: DiffLine[] }
  | { kind: "code"; code: string }
  | { kind: "args"; text: string };

export interface WaitingApproval { callId: string; name: string; reason: string | null; arguments: string; client?: string | null }

function parse(args: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** Old → new as lines: the common head and tail kept as context (at most `context` lines each),
 *  the changed middle as removed then added lines. */
export function lineDiff(oldText: string, newText: string, context = 2): DiffLine[] {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: DiffLine[] = [];
  for (const t of a.slice(Math.max(0, head - context), head)) out.push({ op: " ", text: t });
  for (const t of a.slice(head, a.length - tail)) out.push({ op: "-", text: t });
  for (const t of b.slice(head, b.length - tail)) out.push({ op: "+", text: t });
  for (const t of a.slice(a.length - tail, Math.min(a.length, a.length - tail + context))) out.push({ op: " ", text: t });
  return out;
}

// Characters a person cannot see (controls, format and bidi characters, non-ASCII spaces) become
// escapes, as in dsh_notebook/tools/visible.py: the banner shows what will run, nothing hidden.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/gu;
const NAMED: Record<string, string> = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };

function escapeChar(c: string): string {
  if (c === " ") return c;
  if (NAMED[c]) return NAMED[c];
  const code = c.codePointAt(0) ?? 0;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
}

/** One line, space runs collapsed, every invisible character escaped (a bash command). */
export function visible(text: string): string {
  return text.replace(/ {2,}/g, " ").replace(HIDDEN, escapeChar);
}

/** Lines kept (code, file content), every other invisible character escaped. */
export function visibleLines(text: string): string {
  return text.split("\n").map((line) => line.replace(HIDDEN, (c) => (c === "\t" ? c : escapeChar(c)))).join("\n");
}

export function approvalDetail(name: string, args: string): ApprovalDetail {
  const a = parse(args);
  if (!a) return { kind: "args", text: visibleLines(args) };
  if (name === "bash" && typeof a.command === "string") return { kind: "command", command: visible(a.command) };
  if (name === "edit" && (typeof a.old_string === "string" || typeof a.new_string === "string")) {
    const lines = lineDiff(visibleLines(str(a.old_string)), visibleLines(str(a.new_string)));
    return { kind: "edit", path: visible(str(a.file_path)), lines, replaceAll: a.replace_all === true };
  }
  if (name === "write" && typeof a.content === "string") {
    return { kind: "write", path: visible(str(a.file_path)), lines: visibleLines(a.content).split("\n").map((text) => ({ op: "+" as const, text })) };
  }
  if ((name === "python" || name === "execute_code") && typeof a.code === "string") return { kind: "code", code: visibleLines(a.code) };
  // an external agent's cell (issue 41): the source it would write
  if ((name === "insert_cell" || name === "edit_cell") && typeof a.source === "string") return { kind: "code", code: visibleLines(a.source) };
  return { kind: "args", text: visibleLines(JSON.stringify(a, null, 2)) };
}

/** A stable key of what is waiting: the banner is rebuilt only when it changes (so a click is
 *  never lost to a re-render, and focus stays on the button). */
export function waitingKey(list: readonly WaitingApproval[]): string {
  return list.map((w) => `${w.callId}\u0000${w.arguments}`).join("\u0001");
}
