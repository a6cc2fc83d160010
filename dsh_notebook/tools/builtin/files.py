"""File tools: ``read``, ``write``, ``edit`` (and ``glob`` / ``grep`` from :mod:`.search`).

Every path goes through :meth:`Workspace.resolve`, so nothing outside the session's workspace
can be read or written, whatever ``..``, absolute path or symlink the model tries. All file I/O
runs off the host loop (:func:`~.safe_io.run_io`, with the tool's timeout); FIFOs, devices,
sockets (``SPECIAL_FILE``) and hard-linked files (``HARD_LINK``) are refused on the opened
descriptor; reads stream the file in bounded memory. Failures are raised as coded
:class:`ToolError` s; the runtime turns them into ``Error: ...`` tool results.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ToolError
from ..base import Tool, ToolContext, ToolOutput, argument
from ..sandbox import Workspace
from .safe_io import Cancel, LineReader, open_regular, run_io, write_all
from .search import glob_tool, grep_tool

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
BINARY_SNIFF = 8192
MAX_SCAN_BYTES = 256_000_000  # bytes one read call scans (to count lines) at most
MAX_EDIT_BYTES = 50_000_000
FILE_TOOL_TIMEOUT_S = 30.0


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadArgs(_Args):
    file_path: str = Field(min_length=1, description="Path of the file, relative to the workspace.")
    offset: int | None = Field(None, ge=1, description="1-based line number to start at.")
    limit: int | None = Field(None, ge=1, description=f"Lines to read (default {MAX_LINES}).")


class WriteArgs(_Args):
    file_path: str = Field(min_length=1, description="Path of the file, relative to the workspace.")
    content: str = Field(description="The complete new content of the file.")


class EditArgs(_Args):
    file_path: str = Field(min_length=1, description="Path of the file, relative to the workspace.")
    old_string: str = Field(min_length=1, description="Exact text to replace.")
    new_string: str = Field(description="Text to put in its place.")
    replace_all: bool = Field(False, description="Replace every occurrence, not just one.")


def existing_file(ws: Workspace, file_path: str) -> Path:
    """The real path of an existing file in the workspace (its kind is checked when opened)."""
    path = ws.resolve(file_path)
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise ToolError(f"file not found: {file_path}", code="FILE_NOT_FOUND") from exc
    except OSError as exc:
        raise ToolError(f"cannot use {file_path}: {exc.strerror or exc}", code="INVALID_PATH") from exc
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{file_path} is a directory, not a file", code="IS_DIRECTORY")
    return path


def _read_window(fd: int, cancel: Cancel, start: int, limit: int) -> tuple[list[str], int, int, bool, bool]:
    """Numbered lines ``start..start+limit-1`` (within the size cap), the total line count,
    the last line shown, whether the size cap cut the window short, and whether the scan
    stopped at :data:`MAX_SCAN_BYTES` (then the total is a lower bound)."""
    out: list[str] = []
    size = total = 0
    last_shown = start - 1
    capped = False
    reader = LineReader(fd, cancel, MAX_LINE_CHARS * 4, MAX_SCAN_BYTES)
    for total, (raw, whole) in enumerate(reader.lines(), start=1):
        if total < start:
            continue
        if total >= start + limit or capped:
            total += reader.count_rest()
            break
        text = raw.decode("utf-8", errors="replace")
        if len(text) > MAX_LINE_CHARS or not whole:
            text = text[:MAX_LINE_CHARS] + " [line truncated]"
        rendered = f"{total:>6}\t{text}"
        if size + len(rendered) > MAX_READ_CHARS and out:
            capped = True
            total += reader.count_rest()
            break
        out.append(rendered)
        size += len(rendered) + 1
        last_shown = total
    return out, total, last_shown, capped, reader.truncated


def _read_sync(path: Path, name: str, start: int, limit: int, cancel: Cancel) -> tuple[list[str], int, int, bool, bool]:
    fd = open_regular(path, os.O_RDONLY, name)
    try:
        if b"\0" in os.pread(fd, BINARY_SNIFF, 0):
            raise ToolError(f"{name} is a binary file; read shows text only", code="BINARY_FILE")
        return _read_window(fd, cancel, start, limit)
    finally:
        os.close(fd)


async def read_file(args: ReadArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    path = await run_io(lambda _c: existing_file(ws, args.file_path))
    start = args.offset or 1
    out, total, last_shown, truncated_by_size, partial = await run_io(
        lambda cancel: _read_sync(path, args.file_path, start, args.limit or MAX_LINES, cancel)
    )
    name = ws.relative(path)
    if total == 0:
        return ToolOutput(f"{name} is empty (0 lines).")
    if start > total:
        raise ToolError(
            f"offset {start} is past the end of {name}, which has {total} lines", code="BAD_OFFSET"
        )
    body = "\n".join(out)
    of = f"at least {total} (only the first {MAX_SCAN_BYTES // 1_000_000} MB were scanned)" if partial else str(total)
    if start == 1 and last_shown == total and not partial:
        return ToolOutput(f"{body}\n\n({name}: {total} lines)")
    why = " (output size cap reached)" if truncated_by_size else ""
    return ToolOutput(
        f"{body}\n\n({name}: showing lines {start}-{last_shown} of {of}{why}; "
        "use offset and limit to read other parts)"
    )


def _write_sync(ws: Workspace, file_path: str, data: bytes) -> tuple[Path, bool]:
    path = ws.resolve(file_path)
    if path.is_dir():
        raise ToolError(f"{file_path} is a directory, not a file", code="IS_DIRECTORY")
    path.parent.mkdir(parents=True, exist_ok=True)
    ws.resolve(file_path)  # the parents just created may not lead out either
    try:
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, file_path, 0o644)
        existed = False
    except ToolError as exc:
        if exc.code != "IO_ERROR" or not path.exists():
            raise
        fd = open_regular(path, os.O_WRONLY, file_path)  # it exists: never follow, never block
        existed = True
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    return path, existed


async def write_file(args: WriteArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    data = args.content.encode("utf-8")
    path, existed = await run_io(lambda _c: _write_sync(ws, args.file_path, data))
    lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
    verb = "Overwrote" if existed else "Created"
    return ToolOutput(f"{verb} {ws.relative(path)} ({len(data)} bytes, {lines} lines).")


def _edit_sync(ws: Workspace, args: EditArgs) -> str:
    path = existing_file(ws, args.file_path)
    name = ws.relative(path)
    fd = open_regular(path, os.O_RDWR, args.file_path)
    try:
        size = os.fstat(fd).st_size
        if size > MAX_EDIT_BYTES:
            raise ToolError(f"{name} is {size} bytes; edit changes files up to {MAX_EDIT_BYTES} bytes",
                            code="FILE_TOO_LARGE")
        raw = os.pread(fd, size + 1, 0)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(f"{name} is not UTF-8 text; edit cannot change it", code="BINARY_FILE") from exc
        count = text.count(args.old_string)
        if count == 0:
            raise ToolError(
                f"old_string was not found in {name}; it must match the file exactly, "
                "including whitespace and indentation (read the file first)",
                code="NO_MATCH",
            )
        if count > 1 and not args.replace_all:
            raise ToolError(
                f"old_string occurs {count} times in {name}; add surrounding context to make it "
                "unique, or set replace_all to replace every occurrence",
                code="NOT_UNIQUE",
            )
        new_text = text.replace(args.old_string, args.new_string, -1 if args.replace_all else 1)
        write_all(fd, new_text.encode("utf-8"))
    finally:
        os.close(fd)
    replaced = count if args.replace_all else 1
    line = text[: text.index(args.old_string)].count("\n") + 1
    plural = "occurrence" if replaced == 1 else "occurrences"
    return f"Edited {name}: replaced {replaced} {plural} (first at line {line})."


async def edit_file(args: EditArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    if args.old_string == args.new_string:
        raise ToolError(
            "old_string and new_string are identical; nothing would change", code="NO_CHANGE"
        )
    return ToolOutput(await run_io(lambda _c: _edit_sync(ws, args)))


read_tool = Tool(
    name="read",
    description=(
        "Read a text file from the workspace. Output is numbered like `cat -n` and ends with the "
        f"file's total line count. Reads up to {MAX_LINES} lines; use offset/limit for more."
    ),
    args_model=ReadArgs,
    execute=read_file,
    timeout_s=FILE_TOOL_TIMEOUT_S,
    concurrency_safe=True,
    approval="allow",
    effect="read",
    subject=argument("file_path"),
)

write_tool = Tool(
    name="write",
    description="Create or overwrite a file in the workspace with the given content "
    "(parent directories are created).",
    args_model=WriteArgs,
    execute=write_file,
    timeout_s=FILE_TOOL_TIMEOUT_S,
    approval="ask",
    effect="edit",
    subject=argument("file_path"),
)

edit_tool = Tool(
    name="edit",
    description=(
        "Replace an exact string in a file. old_string must match exactly once unless "
        "replace_all is true. Read the file first to copy the text precisely."
    ),
    args_model=EditArgs,
    execute=edit_file,
    timeout_s=FILE_TOOL_TIMEOUT_S,
    approval="ask",
    effect="edit",
    subject=argument("file_path"),
)

__all__ = [
    "EditArgs",
    "ReadArgs",
    "WriteArgs",
    "edit_tool",
    "glob_tool",
    "grep_tool",
    "read_tool",
    "write_tool",
]
