"""Search tools: ``glob {pattern}`` and ``grep {pattern, path?}``, confined to the workspace.

Both skip version-control and dependency folders, never follow a symlink out of the workspace,
and cap their output (the result says when a cap was hit). Both run off the host loop.
``grep`` uses RE2 (the ``google-re2`` wheel: linear time, so no pattern can hang it; no
backreferences or lookaround, which its error says), has its own deadline
(:data:`GREP_TIMEOUT_S`), skips binary files (a NUL byte in the first 8 KiB), and refuses
special and hard-linked files (skipped, and said, in a directory search).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import re2
from pydantic import BaseModel, ConfigDict, Field

from ...errors import ToolError
from ..base import Tool, ToolContext, ToolOutput, argument
from ..sandbox import Workspace
from .safe_io import Cancel, open_regular, run_io

MAX_GLOB_RESULTS = 500
MAX_GREP_MATCHES = 200
MAX_GREP_LINE = 300
MAX_GREP_FILE_BYTES = 5_000_000
GREP_TIMEOUT_S = 20.0
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is the tool's coded error, not a line on stderr
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache"})
_GLOB_CHARS = re.compile(r"[*?\[]")


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(min_length=1, description="Glob pattern, e.g. `**/*.py` or `src/*.ts`.")


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(min_length=1, description="Regular expression (RE2: Python-like syntax, no backreferences or lookaround).")
    path: str | None = Field(None, description="File or directory to search (default: workspace).")


def _skipped(rel_parts: tuple[str, ...]) -> bool:
    return any(part in SKIP_DIRS for part in rel_parts)


def _glob(ws: Workspace, pattern: str) -> tuple[list[str], int]:
    pat = Path(pattern)
    if pat.is_absolute():
        literal = Path(*pat.parts[: _first_glob_part(pat.parts)])
        base = ws.resolve(literal)
        rel_pattern = Path(*pat.parts[len(literal.parts) :])
        if not rel_pattern.parts:
            return ([ws.relative(base)] if base.is_file() else []), 0
        matches = base.glob(str(rel_pattern))
    else:
        literal_parts = pat.parts[: _first_glob_part(pat.parts)]
        if literal_parts:
            ws.resolve(Path(*literal_parts))  # refuse ../ escapes with a clear message
        matches = ws.root.glob(pattern)
    found: list[str] = []
    for match in matches:
        real = Path(os.path.realpath(match))
        if not ws.contains(real) or not real.is_file():
            continue
        rel = match.relative_to(ws.root) if match.is_relative_to(ws.root) else real.relative_to(ws.root)
        if _skipped(rel.parts):
            continue
        found.append(rel.as_posix())
    found.sort()
    return found[:MAX_GLOB_RESULTS], max(0, len(found) - MAX_GLOB_RESULTS)


def _first_glob_part(parts: tuple[str, ...]) -> int:
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            return i
    return len(parts)


async def glob_files(args: GlobArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    try:
        found, more = await asyncio.to_thread(_glob, ws, args.pattern)
    except (ValueError, NotImplementedError) as exc:
        raise ToolError(f"invalid glob pattern {args.pattern!r}: {exc}", code="INVALID_PATTERN") from exc
    if not found:
        return ToolOutput(f"No files match {args.pattern!r}.")
    tail = f"\n[{more} more files not shown; narrow the pattern]" if more else ""
    return ToolOutput("\n".join(found) + tail)


def _files_under(ws: Workspace, base: Path, cancel: Cancel) -> list[Path]:
    if not base.is_dir():  # a file, or a special file the open refuses
        return [base]
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        cancel.check()
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            real = Path(os.path.realpath(os.path.join(dirpath, name)))
            if ws.contains(real) and real.is_file():
                out.append(real)
    return out


def compile_pattern(pattern: str) -> re2._Regexp:
    """The RE2 regex of ``pattern`` (linear time), or a coded ``INVALID_PATTERN`` error."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        why = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolError(
            f"invalid regular expression {pattern!r}: {why}. grep uses RE2 (linear time): "
            "backreferences (\\1) and lookaround ((?=…), (?!…), (?<=…), (?<!…)) are unsupported",
            code="INVALID_PATTERN",
        ) from exc


class _Grep:
    def __init__(self, ws: Workspace, regex: re2._Regexp, cancel: Cancel, single: bool) -> None:
        self.ws, self.regex, self.cancel, self.single = ws, regex, cancel, single
        self.lines: list[str] = []
        self.skipped = 0
        self.linked = 0
        self.special = 0
        self.capped = False
        self.deadline = time.monotonic() + GREP_TIMEOUT_S

    def check(self) -> None:
        self.cancel.check()
        if time.monotonic() > self.deadline:
            raise ToolError(
                f"grep stopped after {GREP_TIMEOUT_S:g} s ({len(self.lines)} matches so far); "
                "narrow the path or the pattern",
                code="TIMED_OUT",
            )

    def file(self, path: Path) -> bool:
        """Search one file; False once the match cap is reached."""
        self.check()
        try:
            fd = open_regular(path, os.O_RDONLY, self.ws.relative(path))
        except ToolError as exc:
            if self.single:
                raise
            if exc.code == "HARD_LINK":
                self.linked += 1
            elif exc.code == "SPECIAL_FILE":
                self.special += 1
            else:
                self.skipped += 1
            return True
        try:
            if os.fstat(fd).st_size > MAX_GREP_FILE_BYTES:
                self.skipped += 1
                return True
            data = os.read(fd, MAX_GREP_FILE_BYTES + 1)
        except OSError:
            self.skipped += 1
            return True
        finally:
            os.close(fd)
        if b"\0" in data[:8192]:
            return True
        text = data.decode("utf-8", errors="replace")
        rel = self.ws.relative(path)
        for n, line in enumerate(text.splitlines(), start=1):
            if n % 1000 == 0:
                self.check()
            if self.regex.search(line):
                if len(self.lines) >= MAX_GREP_MATCHES:
                    return False
                shown = line if len(line) <= MAX_GREP_LINE else line[:MAX_GREP_LINE] + " [...]"
                self.lines.append(f"{rel}:{n}: {shown}")
        return True


def _grep(ws: Workspace, regex: re2._Regexp, base: Path, cancel: Cancel) -> _Grep:
    files = _files_under(ws, base, cancel)
    run = _Grep(ws, regex, cancel, single=files == [base])
    for path in files:
        if not run.file(path):
            run.capped = True
            break
    return run


async def grep_files(args: GrepArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    regex = compile_pattern(args.pattern)

    def search(cancel: Cancel) -> tuple[Path, _Grep]:
        base = ws.resolve(args.path or ".")
        if not base.exists():
            raise ToolError(f"path not found: {args.path}", code="FILE_NOT_FOUND")
        return base, _grep(ws, regex, base, cancel)

    base, run = await run_io(search)
    where = ws.relative(base)
    notes = []
    if run.capped:
        notes.append(f"[match cap of {MAX_GREP_MATCHES} reached; narrow the pattern or path]")
    if run.skipped:
        notes.append(f"[{run.skipped} unreadable or oversized files skipped]")
    if run.linked:
        notes.append(f"[{run.linked} hard-linked files skipped]")
    if run.special:
        notes.append(f"[{run.special} special files (FIFOs, sockets, devices) skipped]")
    if not run.lines:
        return ToolOutput("\n".join([f"No matches for {args.pattern!r} in {where}.", *notes]))
    return ToolOutput("\n".join(run.lines + notes))


glob_tool = Tool(
    name="glob",
    description="List workspace files matching a glob pattern (`**` matches any depth), sorted.",
    args_model=GlobArgs,
    execute=glob_files,
    concurrency_safe=True,
    approval="allow",
    effect="read",
    subject=argument("pattern"),
)


def _grep_subject(args: Mapping[str, Any]) -> str | None:
    """`path` when given, else `pattern`

    A grep's rule subject: the folder it searches when it names one, else what it searches for."""
    return argument("path")(args) if isinstance(args.get("path"), str) else argument("pattern")(args)


grep_tool = Tool(
    name="grep",
    description=(
        "Search file contents with a regular expression (RE2 syntax: like Python's re, without "
        "backreferences or lookaround). Prints `path:line: text` for "
        "each matching line; binary files are skipped."
    ),
    args_model=GrepArgs,
    execute=grep_files,
    timeout_s=GREP_TIMEOUT_S + 10,
    concurrency_safe=True,
    approval="allow",
    effect="read",
    subject=_grep_subject,
)
