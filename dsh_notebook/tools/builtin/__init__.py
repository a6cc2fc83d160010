"""The built-in tools (DESIGN §6): read, write, edit, bash, glob, grep."""

from __future__ import annotations

from .bash import BashArgs, bash_tool
from .files import EditArgs, ReadArgs, WriteArgs, edit_tool, read_tool, write_tool
from .search import GlobArgs, GrepArgs, glob_tool, grep_tool

__all__ = [
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
