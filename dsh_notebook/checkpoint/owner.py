"""Which session's checkpoints a rewind uses (issue 38 item 4).

A conversation rewind forks the session before the turn and makes the fork current (in the
notebook). When that rewind left a conflict, the user's next move is ``%dsh rewind N --force`` —
on the fork, which has no checkpoint of turn ``N`` (an empty fork has none at all): the rewind
must act on the session that owns the checkpoints. The fork names its origin
(``session/forked``), and the origin's ``checkpoint/restored`` names the fork it made (``forked``)
and the turn it rewound to: that pair identifies a rewind's fork, and nothing else is followed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..wire.events import AnyEvent, CheckpointRestored, CheckpointTaken, SessionForked

_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@dataclass(frozen=True)
class Owner:
    """The session ``session_id`` (log ``path``) whose rewind to ``turn`` forked the asking one."""

    session_id: str
    path: Path
    turn: int


def has_checkpoint(events: Sequence[AnyEvent], turn: int | None) -> bool:
    """The log has a checkpoint of ``turn`` (``None``: of any turn)."""
    return any(isinstance(e, CheckpointTaken) and (turn is None or e.turn == turn) for e in events)


def rewind_owner(session_id: str, events: Sequence[AnyEvent], sessions_dir: Path) -> Owner | None:
    """The origin whose rewind made the session ``session_id`` (with ``events``) as its
    conversation fork, or ``None`` (not such a fork, or the origin is gone)."""
    from ..session.persistence import load_log

    forked = next((e for e in reversed(events) if isinstance(e, SessionForked)), None)
    if forked is None or not _ID.fullmatch(forked.from_) or forked.from_ in (".", ".."):
        return None
    path = sessions_dir / f"{forked.from_}.jsonl"
    try:
        origin = load_log(path)
    except Exception:
        return None
    made = [e for e in origin.events if isinstance(e, CheckpointRestored) and e.forked == session_id]
    if not made:
        return None
    return Owner(origin.id, path, made[-1].to_turn)
