"""What a fork's workspace is: the origin's directory as it is now — the same as at the fork point
only when no tool call after that point could have changed files there.

A fork repeats the log, not the files. A replay (``--model replay:ORIGIN``) answers a request
only while its messages equal the origin's, and tool results read the files: a workspace changed
after the fork point (an ``edit``, a ``bash`` that wrote) makes the first differing result stop the
replay with ``REPLAY_DIVERGED``. :func:`workspace_note` says which case a fork is in, naming the
calls that may have changed the files, so the person restores them first (git, a copy) or forks
before the first change. Which tools only read is the tools' own flag (``Tool.read_only``): the
caller passes :func:`dsh_notebook.tools.registry.is_read_only` (the session floor knows no tool).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

ReadOnly = Callable[[str], bool]
"""Whether a call of the tool with this name only reads."""


def changing_calls(events: Sequence[Any], after: int, read_only: ReadOnly) -> list[tuple[int, str, str]]:
    """``(seq, call id, tool)`` of every ``tool/call`` after seq ``after`` that may change files
    (any tool but the read-only ones)."""
    return [(e.seq, e.call_id, e.name) for e in events
            if getattr(e, "type", None) == "tool/call" and e.seq > after and not read_only(e.name)]


def workspace_note(events: Sequence[Any], at: int, cwd: str, *, read_only: ReadOnly) -> str:
    """One sentence for the person forking at ``at``: is ``cwd`` as it was there?"""
    later = changing_calls(events, at, read_only)
    if not later:
        return f"workspace: {cwd} — as it was at seq {at} (no tool call after it could change files)"
    named = ", ".join(f"{name} {call_id}" for _seq, call_id, name in later[:4]) + (" …" if len(later) > 4 else "")
    first_change = changing_calls(events, -1, read_only)[0][0]
    earlier = (f", or fork at seq {first_change - 1} or before (ahead of the first call that could change files)"
               if first_change <= at else "")
    return (f"workspace: {cwd} — as it is now, not as it was at seq {at}: {len(later)} tool call{'' if len(later) == 1 else 's'} after it may "
            f"have changed it ({named}). A replay sees today's files and stops with REPLAY_DIVERGED at the first "
            f"tool result that differs; put the files back first (git, a copy of the workspace){earlier}")
