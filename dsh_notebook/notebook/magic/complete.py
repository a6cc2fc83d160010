"""Tab completion in the agent kernel: ``%dsh`` flags, subcommands and values, ``{variables}``.

:func:`complete` works on the cell text and the cursor offset (a ``complete_request``) and
returns ``(matches, start, end)`` or ``None`` when IPython's own completer should answer
(``%%python`` cells, other magics, ``!`` lines). Inside a prompt, ``{na`` completes to the names
of the notebook namespace (``{name}`` is interpolated when the prompt is sent); on a ``%dsh`` line
the first word completes to flags and subcommands, a flag's value to its choices (``--approve``),
known model ids (``--model``) or session ids (``--session``, ``resume``, ``show``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .args import FLAGS
from .cell_kinds import split_cell

SUBCOMMANDS = ("stop", "sessions", "resume", "show", "config", "mode")
MODEL_IDS = ("script:auto", "deepseek:deepseek-chat", "deepseek:deepseek-reasoner", "openai:gpt-4o-mini", "openai:gpt-4o")
_VAR = re.compile(r"\{([A-Za-z_][\w]*)?$")
_WORD = re.compile(r"[^\s]*$")

Completion = tuple[list[str], int, int]


def _line_at(code: str, cursor: int) -> tuple[str, int]:
    start = code.rfind("\n", 0, cursor) + 1
    return code[start:cursor], start


def complete(code: str, cursor: int, names: Callable[[], Iterable[str]],
             sessions: Callable[[], Iterable[str]] = lambda: ()) -> Completion | None:
    cursor = max(0, min(cursor, len(code)))
    kind, _ = split_cell(code)
    line, line_start = _line_at(code, cursor)
    stripped = line.lstrip()
    dsh_line = stripped.startswith(("%dsh", "%%dsh")) and (line_start == 0 or not stripped.startswith("%%"))
    if kind == "python" or (stripped.startswith(("%", "!")) and not dsh_line) or (kind == "magic" and not dsh_line):
        if kind == "magic" and code.lstrip().startswith("%%dsh") and not stripped.startswith("%"):
            return _variables(line, cursor, names) or ([], cursor, cursor)  # a %%dsh cell body is a prompt
        return None
    if dsh_line:
        return _dsh(stripped, cursor, names, sessions)
    return _variables(line, cursor, names) or ([], cursor, cursor)


def _variables(line: str, cursor: int, names: Callable[[], Iterable[str]]) -> Completion | None:
    m = _VAR.search(line)
    if m is None or line[: m.start()].endswith("{"):  # "{{" is a literal brace
        return None
    prefix = m.group(1) or ""
    matches = sorted({n for n in names() if isinstance(n, str) and n.startswith(prefix) and not n.startswith("_")})
    return [f"{n}}}" for n in matches], cursor - len(prefix), cursor


def _dsh(line: str, cursor: int, names: Callable[[], Iterable[str]], sessions: Callable[[], Iterable[str]]) -> Completion | None:
    var = _variables(line, cursor, names)
    if var is not None:
        return var
    body = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
    if not line.endswith((" ", "\t")) and " " not in line.strip():
        return [], cursor, cursor  # still typing "%dsh" itself: IPython has no better answer
    word = _WORD.search(line).group(0)  # type: ignore[union-attr]
    before = body[: len(body) - len(word)].split()
    start = cursor - len(word)
    previous = before[-1] if before else None
    spec = next((s for s in FLAGS if s.name == previous), None)
    if spec is not None and spec.metavar is not None:
        if spec.choices:
            values: Iterable[str] = spec.choices
        elif spec.dest == "model":
            values = MODEL_IDS
        elif spec.dest == "session":
            values = sessions()
        else:
            return [], cursor, cursor
        return sorted(v for v in values if v.startswith(word)), start, cursor
    if previous in ("resume", "show") and len(before) == 1:
        return sorted(s for s in sessions() if s.startswith(word)), start, cursor
    if previous == "mode" and len(before) == 1:
        modes = next(s.choices for s in FLAGS if s.dest == "mode")
        return [m for m in modes if m.startswith(word)], start, cursor
    if not _in_flags(before):
        return [], cursor, cursor  # the prompt text: nothing to offer but {variables}
    options = [s.name for s in FLAGS] if word.startswith("-") else [*SUBCOMMANDS, *(s.name for s in FLAGS)]
    return [o for o in options if o.startswith(word)], start, cursor


def _in_flags(tokens: list[str]) -> bool:
    """Whether the words so far are all flags (with their values): the next word may be one too."""
    by_name = {s.name: s for s in FLAGS}
    i = 0
    while i < len(tokens):
        name, eq, _ = tokens[i].partition("=")
        spec = by_name.get(name)
        if spec is None:
            return False
        i += 1 if (eq or spec.metavar is None) else 2
    return True
