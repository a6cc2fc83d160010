"""One-line summaries of tool results for text views (the cell output, the CLI, listings).

A ``bash`` result ends with ``[exit code: N]``: the summary leads with it, because "the tool
ran" and "the command succeeded" are different facts (seed 001: tool ran ≠ tests passed).
"""

from __future__ import annotations

import re

_EXIT = re.compile(r"^\[exit code: (-?\d+)\]$")


def summarize_result(text: str, *, width: int = 100) -> str:
    """``first line (+N lines)``, truncated to ``width``; a non-zero exit code comes first."""
    lines = text.strip().splitlines()
    if not lines:
        return "(empty)"
    exit_note = ""
    match = _EXIT.match(lines[-1].strip())
    if match is not None:
        lines = lines[:-1] or ["(no output)"]
        if match.group(1) != "0":
            exit_note = f"[exit code {match.group(1)}] "
    first = exit_note + lines[0].strip()
    if len(first) > width:
        first = first[: width - 1] + "…"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return first + more
