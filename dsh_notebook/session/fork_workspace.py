"""What a fork's workspace is: the origin's directory as it is now — the same as at the fork point
only when no tool call after that point could have changed files there.

A fork repeats the log, not the files. A replay (``--model replay:ORIGIN``) answers a request
only while its messages equal the origin's, and tool results read the files: a workspace changed
after the fork point (an ``edit``, a ``bash`` that wrote) makes the first differing result stop the
replay with ``REPLAY_DIVERGED``. :func:`workspace_note` says which case a fork is in, naming the
calls that may have changed the files, so the person restores them first (git, a copy) or forks
before the first change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

READ_ONLY_TOOLS = frozenset({"read", "glob", "grep", "notebook_read", "inspect_var"})


def changing_calls(events: Sequence[Any], after: int) -> list[tuple[int, str, str]]:
    """``(seq, call id, tool)`` of every ``tool/call`` after seq ``after`` that may change files
    (any tool but the read-only built-ins)."""
    return [(e.seq, e.call_id, e.name) for e in events
            if getattr(e, "type", None) == "tool/call" and e.seq > after and e.name not in READ_ONLY_TOOLS]


def workspace_note(events: Sequence[Any], at: int, cwd: str) -> str:
    """One sentence for the person forking at ``at``: is ``cwd`` as it was there?"""
    later = changing_calls(events, at)
    if not later:
        return f"workspace: {cwd} — as it was at seq {at} (no tool call after it could change files)"
    named = ", ".join(f"{name} {call_id}" for _seq, call_id, name in later[:4]) + (" …" if len(later) > 4 else "")
    first_change = changing_calls(events, -1)[0][0]
    earlier = (f", or fork at seq {first_change - 1} or before (ahead of the first call that could change files)"
               if first_change <= at else "")
    return (f"workspace: {cwd} — as it is now, not as it was at seq {at}: {len(later)} tool call{'' if len(later) == 1 else 's'} after it may "
            f"have changed it ({named}). A replay sees today's files and stops with REPLAY_DIVERGED at the first "
            f"tool result that differs; put the files back first (git, a copy of the workspace){earlier}")
