"""The fenced code blocks of the docs (README.md, CONTRIBUTING.md, docs/**/*.md), and how each is tested.

A block runs by its language (tests/readme/test_blocks.py):

- ``bash``: shell lines of the CLI, as one script, in a scratch folder (CONTRIBUTING's in the
  repository) and a scratch ``DSH_HOME``;
- ``console``: ``$ command`` lines and the output they show (``...`` stands for any lines);
- ``python``: notebook cells — a page's ``python`` blocks are one notebook, run in order in a real kernel;
- ``json``: parsed; ``jsonl``: every line a valid session-log line (``LogLine``).

A block that cannot run (it needs an API key, installs into your environment, starts a server)
carries ``<!-- check KIND: why it cannot run -->`` on the line before it, and is checked by KIND
instead (tests/readme/checks.py) — a check that fails on a wrong block, never a skip:

- ``commands`` (a shell block): each command is checked without running it — ``python -m
  dsh_notebook …`` against the CLI's parsers, ``make T`` against the Makefile's targets, ``pip
  install …`` against the project's extras and pins, any other program must exist;
- ``magics`` (a python block): compiled as IPython would run it; every ``%dsh`` line parsed by the
  magic's parser, every ``%config DshMagics.NAME`` a setting that exists;
- ``mcp.json`` / ``rules`` / ``prices`` (a json block): parsed, then read by the code that reads
  such a file (``$DSH_HOME/mcp.json``, an approval-rules file, a prices file): it must load cleanly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXECUTED = ("bash", "console", "python", "json", "jsonl")
CHECKS = {"commands": ("bash",), "magics": ("python",), "mcp.json": ("json",), "rules": ("json",),
          "prices": ("json",), "mcp-client": ("json", "toml")}
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
_MARK = re.compile(r"^\s*<!--\s*check\s+([\w.-]+)\s*:\s*(.*?)\s*-->\s*$")
_OLD_MARK = re.compile(r"^\s*<!--\s*not-tested\b")


def doc_files() -> list[Path]:
    """Every page whose blocks are tested: the README, CONTRIBUTING and the docs/ tree."""
    return [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    check: str | None  # the check KIND, if marked
    reason: str | None  # why the block cannot run, if marked
    old_mark: bool = False  # carries the retired <!-- not-tested: … --> marker

    @property
    def page(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    def where(self) -> str:
        return f"{self.page}:{self.line} ({self.lang or 'no language'})"


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
        out.append(Block(path, i + 1, lang, body, mark.group(1) if mark else None, mark.group(2) if mark else None,
                         old_mark=k >= 0 and bool(_OLD_MARK.match(lines[k]))))
        i = j + 1
    return out


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]


def runs(block: Block) -> bool:
    """Whether the block is executed (rather than checked by its KIND only)."""
    return block.lang in EXECUTED and block.check in (None, "mcp.json", "rules", "prices")


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
