"""Bounds on a tool call's raw arguments, checked before and while they are parsed (issue 21).

A model (or a hostile tool server's echo) can send arguments no tool needs: 100 MB of JSON, or
200,000 nested brackets that make ``json.loads`` (and every ``repr``) hit the recursion limit.
:func:`parse_arguments` refuses both with a coded error (``ARGUMENTS_TOO_LARGE`` before any
parsing, ``BAD_ARGUMENTS`` past :data:`MAX_DEPTH` levels) instead of a traceback, so the call
gets its error result and the run goes on. :func:`display_arguments` is the same for display:
it never raises.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ToolError

__all__ = ["MAX_ARGUMENT_CHARS", "MAX_DEPTH", "display_arguments", "parse_arguments"]

MAX_ARGUMENT_CHARS = 4_000_000  # characters of raw JSON (a write of a large file still fits)
MAX_DEPTH = 64  # nesting levels of objects and arrays


def _depth(value: Any) -> int:
    """Nesting depth of parsed JSON, without recursion (json.loads already bounded it)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def parse_arguments(raw: str, tool: str) -> Any:
    """The parsed arguments, or ``ToolError`` (``ARGUMENTS_TOO_LARGE``, ``BAD_ARGUMENTS``,
    ``INVALID_JSON``) — never ``RecursionError`` or ``MemoryError``."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        raise ToolError(
            f"the arguments for {tool} are {len(raw):,} characters; the limit is {MAX_ARGUMENT_CHARS:,}. "
            "Send less at once (write a large file in parts, or let a command produce it)",
            code="ARGUMENTS_TOO_LARGE")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ToolError(f"the arguments for {tool} are nested too deeply (more than {MAX_DEPTH} levels)",
                        code="BAD_ARGUMENTS") from None
    except ValueError as exc:
        head = raw[:150] + (" … " + raw[-150:] if len(raw) > 300 else raw[150:300])
        raise ToolError(f"the arguments for {tool} are not valid JSON ({exc}): {head}",
                        code="INVALID_JSON") from None
    depth = _depth(value)
    if depth > MAX_DEPTH:
        raise ToolError(f"the arguments for {tool} are nested {depth} levels deep; the limit is {MAX_DEPTH}",
                        code="BAD_ARGUMENTS")
    return value


def display_arguments(raw: str) -> Any:
    """The parsed arguments for display, or ``None`` when they are too big, too deep or not JSON."""
    try:
        return parse_arguments(raw, "display")
    except ToolError:
        return None
