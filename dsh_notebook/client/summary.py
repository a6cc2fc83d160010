"""One-line summaries of tool results for text views (the cell output, the CLI, listings).

The line leads with the **outcome**, because "the tool ran" and "the command succeeded" are
different facts (seed 001: tool ran ≠ tests passed). A ``bash`` result ends with
``[exit code: N]``: its line is ``exit N · <the last meaningful line>`` — for a test run the
verdict (``2 of 6 tests failed``), not the first test's ``ok`` — and only an exit 0 counts as
success. Other tools: ``read`` names the file and its lines, ``grep``/``glob`` count what they
found, ``edit``/``write`` say what they did; an error leads with its code.

:func:`event_count` is the one definition of "N events" used by every view (the cell's summary
line, ``%dsh sessions``, ``show`` and the widgets' headers): the events of the session's log up to
the last one shown — its seq + 1 (the header line is not an event).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..wire.messages import EXIT_LINE

_EXIT = EXIT_LINE
_NOTE = re.compile(r"^\[.*\]$")  # "[background processes … stopped]", "[match cap … reached]"
_READ_TAIL = re.compile(r"^\((?P<body>[^()]+: (?:\d+ lines|showing lines).*)\)$")  # "(src/math.ts: 14 lines)"


class _Seq(Protocol):
    @property
    def seq(self) -> int: ...


def event_count(events: Sequence[_Seq]) -> int:
    """How many events a view counts: the last one's seq + 1 (0 when there are none)."""
    return events[-1].seq + 1 if events else 0


@dataclass(frozen=True)
class Outcome:
    """A tool result in one line: ``ok`` is the mark (✓ only for a success), ``text`` the words."""

    ok: bool
    text: str

    @property
    def mark(self) -> str:
        return "✓" if self.ok else "✗"

    def __str__(self) -> str:
        return f"{self.mark} {self.text}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _meaningful(lines: list[str]) -> list[str]:
    return [ln.strip() for ln in lines if ln.strip() and not _NOTE.match(ln.strip())]


def _json_line(text: str) -> str | None:
    """A pretty-printed JSON value on one line (``None`` if ``text`` is not JSON)."""
    import json

    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def tool_outcome(name: str, text: str, *, is_error: bool = False, code: str | None = None,
                 meta: Mapping[str, Any] | None = None, width: int = 100) -> Outcome:
    """The outcome line of one ``tool/result``: what happened, success or not, in ``width`` chars."""
    lines = text.strip().splitlines()
    if name == "python":  # its namespace change is shown beside the outcome (meta), not as its text
        lines = [ln for ln in lines if not ln.startswith(("[namespace] ", "[processes] "))]
    if is_error or code:
        body = [ln for ln in _meaningful(lines) if ln != "Error:"]
        # a traceback's verdict is its last line; any other error says it first
        said = body[-1] if body and body[0].startswith("Traceback") else (body[0] if body else "(no message)")
        said = said.removeprefix("Error: ")
        return Outcome(False, _clip(f"{code}: {said}" if code else said, width))
    exit_code: int | None = None
    if lines and (m := _EXIT.match(lines[-1].strip())):
        exit_code = int(m.group(1))
        lines = lines[:-1]
    elif meta and isinstance(meta.get("exitCode"), int):
        exit_code = int(meta["exitCode"])
    body = _meaningful(lines)
    if exit_code is not None:
        last = body[-1] if body else "(no output)"
        more = f" ({_plural(len(body), 'line')})" if len(body) > 1 else ""
        return Outcome(exit_code == 0, _clip(f"exit {exit_code} · {last}", width - len(more)) + more)
    if not body:
        return Outcome(True, "(no output)" if name == "python" else "(empty)")
    if name in ("read", "") and (m := _READ_TAIL.match(body[-1])):
        return Outcome(True, _clip(m.group("body"), width))
    if name == "grep" and not body[0].startswith("No matches"):
        first = body[0]
        return Outcome(True, _clip(f"{_plural(len(body), 'matching line')} · {first}", width))
    if name == "glob" and not body[0].startswith("No files"):
        return Outcome(True, _clip(f"{_plural(len(body), 'file')} · {', '.join(body[:3])}", width))
    if body[0] in ("{", "[") and (compact := _json_line(text) or _json_line("\n".join(body))) is not None:  # inspect_var: not "✓ {"
        return Outcome(True, _clip(compact, width))
    last = body[-1] if name in ("python", "bash") else body[0]
    more = f" (+{_plural(len(body) - 1, 'line')})" if len(body) > 1 else ""
    return Outcome(True, _clip(last, width - len(more)) + more)


def summarize_result(text: str, *, width: int = 100) -> str:
    """A message's text in one line: ``first line (+N lines)``, truncated to ``width``. For a
    tool result with an exit code, the outcome line of :func:`tool_outcome` instead."""
    lines = text.strip().splitlines()
    if not lines:
        return "(empty)"
    if _EXIT.match(lines[-1].strip()):
        return tool_outcome("bash", text, width=width).text
    first = _clip(lines[0].strip(), width)
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return first + more
