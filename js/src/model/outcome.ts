// A tool result's text in one line, leading with the outcome — the JS twin of
// dsh_notebook/client/summary.py `tool_outcome` for the inspector's rows: a bash result reads
// "✗ exit 1 · 2 of 6 tests failed" (its verdict line), not its first line of output.
const EXIT = /^\[exit code: (-?\d+)\]$/;
const NOTE = /^\[.*\]$/;

export interface Outcome { ok: boolean; text: string }

export function toolOutcome(text: string, isError = false): Outcome {
  const lines = text.trim().split("\n").map((l) => l.trim());
  const exit = lines.length ? EXIT.exec(lines[lines.length - 1]) : null;
  const body = (exit ? lines.slice(0, -1) : lines).filter((l) => l && !NOTE.test(l));
  if (exit) {
    const n = body.length > 1 ? ` (${body.length} lines)` : "";
    return { ok: exit[1] === "0" && !isError, text: `exit ${exit[1]} · ${body[body.length - 1] ?? "(no output)"}${n}` };
  }
  return { ok: !isError, text: body.join(" ⏎ ") || "(empty)" };
}
