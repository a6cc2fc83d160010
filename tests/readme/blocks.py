"""The fenced code blocks of README.md, and how each is tested.

A block is executed by tests/readme/test_readme.py according to its language — ``bash`` (shell
lines of the CLI, in a scratch ``DSH_HOME``), ``console`` (``$ command`` lines and the output they
show, ``...`` standing for any lines), ``python`` (notebook cells, in order, through a real kernel)
and ``json`` (parsed) — unless the line right before it is ``<!-- not-tested: REASON -->``.
Any other block must carry that marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
EXECUTED = ("bash", "console", "python", "json")
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARK = re.compile(r"^\s*<!--\s*not-tested:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip: str | None  # the not-tested reason, if marked

    def where(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'no language'})"


def blocks(path: Path = README) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1: j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = _MARK.match(lines[k]) if k >= 0 else None
        out.append(Block(i + 1, lang, body, mark.group(1) if mark else None))
        i = j + 1
    return out


def console_steps(text: str) -> list[tuple[str, list[str]]]:
    """``[(command, expected output lines)]`` of a ``console`` block."""
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` lines equal ``actual``'s, a ``...`` line matching any number of lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(output_matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and actual[0].rstrip() == head.rstrip() and output_matches(rest, actual[1:])
