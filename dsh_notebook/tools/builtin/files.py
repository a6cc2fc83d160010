"""File tools: ``read``, ``write``, ``edit`` (and ``glob`` / ``grep`` from :mod:`.search`).

Every path goes through :meth:`Workspace.resolve`, so nothing outside the session's workspace
can be read or written, whatever ``..``, absolute path or symlink the model tries. Failures are
raised as coded :class:`ToolError` s; the runtime turns them into ``Error: ...`` tool results.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ToolError
from ..base import Tool, ToolContext, ToolOutput
from ..sandbox import Workspace
from .search import glob_tool, grep_tool

MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
BINARY_SNIFF = 8192


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
    """The real path of an existing regular file in the workspace, or a coded ToolError."""
    path = ws.resolve(file_path)
    if not path.exists():
        raise ToolError(f"file not found: {file_path}", code="FILE_NOT_FOUND")
    if path.is_dir():
        raise ToolError(f"{file_path} is a directory, not a file", code="IS_DIRECTORY")
    return path


def is_binary(path: Path) -> bool:
    with path.open("rb") as fh:
        return b"\0" in fh.read(BINARY_SNIFF)


def _read_window(path: Path, start: int, limit: int) -> tuple[list[str], int, int, bool]:
    """Numbered lines ``start..start+limit-1`` (within the size cap), the total line count,
    the last line shown, and whether the size cap cut the window short."""
    out: list[str] = []
    size = total = 0
    last_shown = start - 1
    capped = False
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for total, line in enumerate(fh, start=1):
            if total < start or total >= start + limit or capped:
                continue
            text = line.rstrip("\n")
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + " [line truncated]"
            rendered = f"{total:>6}\t{text}"
            if size + len(rendered) > MAX_READ_CHARS and out:
                capped = True
                continue
            out.append(rendered)
            size += len(rendered) + 1
            last_shown = total
    return out, total, last_shown, capped


async def read_file(args: ReadArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    path = existing_file(ws, args.file_path)
    if is_binary(path):
        raise ToolError(f"{args.file_path} is a binary file; read shows text only", code="BINARY_FILE")
    start = args.offset or 1
    out, total, last_shown, truncated_by_size = await asyncio.to_thread(
        _read_window, path, start, args.limit or MAX_LINES
    )
    name = ws.relative(path)
    if total == 0:
        return ToolOutput(f"{name} is empty (0 lines).")
    if start > total:
        raise ToolError(
            f"offset {start} is past the end of {name}, which has {total} lines", code="BAD_OFFSET"
        )
    body = "\n".join(out)
    if start == 1 and last_shown == total:
        return ToolOutput(f"{body}\n\n({name}: {total} lines)")
    why = " (output size cap reached)" if truncated_by_size else ""
    return ToolOutput(
        f"{body}\n\n({name}: showing lines {start}-{last_shown} of {total}{why}; "
        "use offset and limit to read other parts)"
    )


async def write_file(args: WriteArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    path = ws.resolve(args.file_path)
    if path.is_dir():
        raise ToolError(f"{args.file_path} is a directory, not a file", code="IS_DIRECTORY")
    existed = path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = args.content.encode("utf-8")
    path.write_bytes(data)
    lines = args.content.count("\n") + (0 if args.content.endswith("\n") or not args.content else 1)
    verb = "Overwrote" if existed else "Created"
    return ToolOutput(f"{verb} {ws.relative(path)} ({len(data)} bytes, {lines} lines).")


async def edit_file(args: EditArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    if args.old_string == args.new_string:
        raise ToolError(
            "old_string and new_string are identical; nothing would change", code="NO_CHANGE"
        )
    path = existing_file(ws, args.file_path)
    name = ws.relative(path)
    raw = path.read_bytes()
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
    path.write_bytes(new_text.encode("utf-8"))
    replaced = count if args.replace_all else 1
    line = text[: text.index(args.old_string)].count("\n") + 1
    plural = "occurrence" if replaced == 1 else "occurrences"
    return ToolOutput(f"Edited {name}: replaced {replaced} {plural} (first at line {line}).")


read_tool = Tool(
    name="read",
    description=(
        "Read a text file from the workspace. Output is numbered like `cat -n` and ends with the "
        f"file's total line count. Reads up to {MAX_LINES} lines; use offset/limit for more."
    ),
    args_model=ReadArgs,
    execute=read_file,
    concurrency_safe=True,
    approval="allow",
)

write_tool = Tool(
    name="write",
    description="Create or overwrite a file in the workspace with the given content "
    "(parent directories are created).",
    args_model=WriteArgs,
    execute=write_file,
    approval="ask",
)

edit_tool = Tool(
    name="edit",
    description=(
        "Replace an exact string in a file. old_string must match exactly once unless "
        "replace_all is true. Read the file first to copy the text precisely."
    ),
    args_model=EditArgs,
    execute=edit_file,
    approval="ask",
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
