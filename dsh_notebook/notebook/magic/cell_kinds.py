"""How the agent kernel reads a cell: a prompt, a ``%%python`` cell, or IPython's own lines.

:class:`CellRewriter` is an IPython input transformer (the first of ``input_transformers_cleanup``),
so the raw cell stays in IPython's history (``In``, ``notebook_read``) while what runs is:

- a cell whose first line is ``%%python``: the rest of the cell, as Python in the notebook's
  namespace (the ``python`` tool's namespace); the ``%%python`` line becomes the comment
  ``# %%python`` so tracebacks keep the cell's line numbers;
- any other cell magic (``%%dsh --new``, ``%%time``, ``%%bash``): unchanged;
- otherwise every line that begins with ``%`` or ``!`` is IPython's (``%dsh show``,
  ``%dsh sessions``, ``%pip install …``, ``!ls``) and the other lines, joined, are **the prompt**: at
  the place of its first line runs ``%%dsh`` with that text as its body — everything ``%dsh`` does,
  ``{name}`` interpolation included, and the ``TurnResult`` is the cell's value when the prompt ends
  the cell;
- a cell that is only ``name?`` or ``name??`` where ``name`` is a notebook variable: IPython's help
  on it (any other one-word question stays a prompt).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from typing import Any

_PYTHON = re.compile(r"^%%python(\s|$)")
_HELP = re.compile(r"^\s*([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*\?{1,2}\s*$")


def split_cell(source: str) -> tuple[str, str]:
    """``("python" | "magic" | "prompt" | "empty", body)`` of a raw cell (no rewriting)."""
    stripped = source.lstrip()
    if not stripped:
        return "empty", source
    if _PYTHON.match(stripped):
        return "python", stripped.split("\n", 1)[1] if "\n" in stripped else ""
    if stripped.startswith("%%"):
        return "magic", source
    prompt = "\n".join(line for line in source.splitlines() if not is_ipython_line(line)).strip("\n")
    return ("prompt" if prompt.strip() else "magic"), prompt


def is_ipython_line(line: str) -> bool:
    return line.lstrip().startswith(("%", "!"))


class CellRewriter:
    """The input transformer. ``enabled`` is cleared for silent / history-less executions (front
    ends' own introspection code), which then run as Python."""

    has_side_effects = False

    def __init__(self, names: Callable[[], Container[Any]] = lambda: ()) -> None:
        self.enabled = True
        self.names = names

    def __call__(self, lines: list[str]) -> list[str]:
        if not self.enabled:
            return lines
        help_on = _HELP.match("".join(lines))
        if help_on is not None and help_on.group(1) in self.names():
            return lines  # ``df?``: IPython's help on a variable
        return rewrite(lines)


def rewrite(lines: list[str]) -> list[str]:
    source = "".join(lines)
    kind, _body = split_cell(source)
    if kind == "empty":
        return lines
    first = next(i for i, line in enumerate(lines) if line.strip())
    if kind == "python":
        return [*lines[:first], "# %%python\n", *lines[first + 1:]]
    if lines[first].lstrip().startswith("%%"):
        return lines
    out: list[str] = []
    prompt: list[str] = []
    at: int | None = None
    for line in lines:
        if is_ipython_line(line):
            out.append(line.lstrip())
        else:
            if at is None and line.strip():
                at = len(out)
            if at is not None:
                prompt.append(line)
            out.append("\n")
    if at is None:
        return [line if line.endswith("\n") else line + "\n" for line in out]
    text = "".join(prompt).strip("\n")
    out[at] = f"get_ipython().run_cell_magic('dsh', '', {text!r})\n"
    return [line if line.endswith("\n") else line + "\n" for line in out]
