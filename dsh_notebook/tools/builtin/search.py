"""Search tools: ``glob {pattern}`` and ``grep {pattern, path?}``, confined to the workspace.

Both skip version-control and dependency folders, never follow a symlink out of the workspace,
and cap their output (the result says when a cap was hit). ``grep`` uses Python's ``re`` and
skips binary files (a NUL byte in the first 8 KiB).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ToolError
from ..base import Tool, ToolContext, ToolOutput
from ..sandbox import Workspace

MAX_GLOB_RESULTS = 500
MAX_GREP_MATCHES = 200
MAX_GREP_LINE = 300
MAX_GREP_FILE_BYTES = 5_000_000
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".mypy_cache"})
_GLOB_CHARS = re.compile(r"[*?\[]")


class GlobArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(min_length=1, description="Glob pattern, e.g. `**/*.py` or `src/*.ts`.")


class GrepArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pattern: str = Field(min_length=1, description="Python regular expression to search for.")
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


def _files_under(ws: Workspace, base: Path) -> list[Path]:
    if base.is_file():
        return [base]
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            real = Path(os.path.realpath(os.path.join(dirpath, name)))
            if ws.contains(real) and real.is_file():
                out.append(real)
    return out


def _grep(ws: Workspace, regex: re.Pattern[str], base: Path) -> tuple[list[str], bool, int]:
    lines: list[str] = []
    skipped = 0
    for path in _files_under(ws, base):
        try:
            if path.stat().st_size > MAX_GREP_FILE_BYTES:
                skipped += 1
                continue
            data = path.read_bytes()
        except OSError:
            skipped += 1
            continue
        if b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        rel = ws.relative(path)
        for n, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                if len(lines) >= MAX_GREP_MATCHES:
                    return lines, True, skipped
                shown = line if len(line) <= MAX_GREP_LINE else line[:MAX_GREP_LINE] + " [...]"
                lines.append(f"{rel}:{n}: {shown}")
    return lines, False, skipped


async def grep_files(args: GrepArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    try:
        regex = re.compile(args.pattern)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {args.pattern!r}: {exc}", code="INVALID_PATTERN") from exc
    base = ws.resolve(args.path or ".")
    if not base.exists():
        raise ToolError(f"path not found: {args.path}", code="FILE_NOT_FOUND")
    lines, capped, skipped = await asyncio.to_thread(_grep, ws, regex, base)
    where = ws.relative(base)
    if not lines:
        return ToolOutput(f"No matches for {args.pattern!r} in {where}.")
    notes = []
    if capped:
        notes.append(f"[match cap of {MAX_GREP_MATCHES} reached; narrow the pattern or path]")
    if skipped:
        notes.append(f"[{skipped} unreadable or oversized files skipped]")
    return ToolOutput("\n".join(lines + notes))


glob_tool = Tool(
    name="glob",
    description="List workspace files matching a glob pattern (`**` matches any depth), sorted.",
    args_model=GlobArgs,
    execute=glob_files,
    concurrency_safe=True,
    approval="allow",
)

grep_tool = Tool(
    name="grep",
    description=(
        "Search file contents with a Python regular expression. Prints `path:line: text` for "
        "each matching line; binary files are skipped."
    ),
    args_model=GrepArgs,
    execute=grep_files,
    concurrency_safe=True,
    approval="allow",
)
