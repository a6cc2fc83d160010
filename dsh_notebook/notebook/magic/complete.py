"""Tab completion in the agent kernel: ``%dsh`` flags, subcommands and values, ``{variables}``.

:func:`complete` works on the cell text and the cursor offset (a ``complete_request``) and
returns ``(matches, start, end)`` or ``None`` when IPython's own completer should answer
(``%%python`` cells, other magics, ``!`` lines). Inside a prompt, ``{na`` completes to the names
of the notebook namespace (``{name}`` is interpolated when the prompt is sent); on a ``%dsh`` line
the first word completes to flags and subcommands, a flag's value to its choices (``--approve``),
known model ids (``--model``) or session ids (``--session``, ``resume``, ``show``) — all of it read
from the command registry (:func:`dsh_notebook.cmdline.complete.offers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ...cmdline.complete import offers
from .cell_kinds import split_cell

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
    found = offers(before, word, sessions)
    if found is None:
        return [], cursor, cursor  # the prompt text: nothing to offer but {variables}
    return found, cursor - len(word), cursor
