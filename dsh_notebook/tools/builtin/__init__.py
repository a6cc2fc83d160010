"""The built-in tools (DESIGN §6): read, write, edit, bash, grep, glob.

:data:`BUILTIN_TOOLS` is their table: a new built-in tool is its module here, its line in this
table, and its test row in ``tests/tools/test_tool_table.py`` (the conformance test every tool of
the table runs through). The table's order is the order the plan-mode prompt names the reads in.
"""

from __future__ import annotations

from ..base import Tool
from .bash import BashArgs, bash_tool
from .files import EditArgs, ReadArgs, WriteArgs, edit_tool, read_tool, write_tool
from .search import GlobArgs, GrepArgs, glob_tool, grep_tool

BUILTIN_TOOLS: tuple[Tool, ...] = (read_tool, write_tool, edit_tool, bash_tool, grep_tool, glob_tool)

__all__ = [
    "BUILTIN_TOOLS",
    "BashArgs",
    "EditArgs",
    "GlobArgs",
    "GrepArgs",
    "ReadArgs",
    "WriteArgs",
    "bash_tool",
    "edit_tool",
    "glob_tool",
    "grep_tool",
    "read_tool",
    "write_tool",
]
