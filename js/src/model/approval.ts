// What an approval asks about, read from the call's arguments: the full command (bash), the
// edit as a line diff (old → new), the written file, the code; else the arguments as JSON.

export interface DiffLine { op: "-" | "+" | " "; text: string }
export type ApprovalDetail =
  | { kind: "command"; command: string }
  | { kind: "edit"; path: string; lines: DiffLine[]; replaceAll: boolean }
  | { kind: "write"; path: string; lines: DiffLine[] }
  | { kind: "code"; code: string }
  | { kind: "args"; text: string };

export interface WaitingApproval { callId: string; name: string; reason: string | null; arguments: string }

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

export function approvalDetail(name: string, args: string): ApprovalDetail {
  const a = parse(args);
  if (!a) return { kind: "args", text: args };
  if (name === "bash" && typeof a.command === "string") return { kind: "command", command: a.command };
  if (name === "edit" && (typeof a.old_string === "string" || typeof a.new_string === "string")) {
    return { kind: "edit", path: str(a.file_path), lines: lineDiff(str(a.old_string), str(a.new_string)), replaceAll: a.replace_all === true };
  }
  if (name === "write" && typeof a.content === "string") {
    return { kind: "write", path: str(a.file_path), lines: a.content.split("\n").map((text) => ({ op: "+" as const, text })) };
  }
  if (name === "python" && typeof a.code === "string") return { kind: "code", code: a.code };
  return { kind: "args", text: JSON.stringify(a, null, 2) };
}

/** A stable key of what is waiting: the banner is rebuilt only when it changes (so a click is
 *  never lost to a re-render, and focus stays on the button). */
export function waitingKey(list: readonly WaitingApproval[]): string {
  return list.map((w) => `${w.callId}\u0000${w.arguments}`).join("\u0001");
}
