"""Fork a saved session at any event (the agent debugger): a new log that repeats 0..SEQ.

``fork_log(origin, at, sessions_dir)`` writes a new session whose log holds, byte for byte, the
origin's header-less events ``0..at`` (same seqs, times and payloads), then — when ``at`` falls
inside a turn — the closers crash repair would append there (every tool call without a result
gets one, code ``FORKED_BEFORE_RESULT``; an open step and the turn are ended, ``turn/end``
reason ``interrupted`` with ``cause: "fork"``), then ``session/forked {from, at}``. The new
session is a session like any other: it resumes, takes prompts, and forks again. Nothing of the
origin is written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LogFormatError, UserError
from ..wire.events import SessionForked
from .closers import close_interrupted_turn
from .logfile import writer_of
from .persistence import ensure_private_dir, load_log
from .session import Session, now_ms
from .store import new_session_id
from .writer import SessionLog

__all__ = ["ForkResult", "fork_log", "fork_main"]


@dataclass(frozen=True)
class ForkResult:
    session_id: str
    path: Path
    origin_id: str
    at: int
    closers: int  # events appended to close what was open at ``at``


def fork_log(
    origin: str | Path, at: int, sessions_dir: str | Path, *, session_id: str | None = None
) -> ForkResult:
    """Fork the log at ``origin`` after its event ``at`` into ``sessions_dir``."""
    loaded = load_log(origin)
    last = len(loaded.events) - 1
    if last < 0:
        raise UserError(f"{loaded.path}: the session has no events to fork", code="BAD_FORK_POINT")
    if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= last:
        writer = writer_of(loaded.path) if isinstance(at, int) and at > last else None
        live = (f"; process {writer} is writing it now and has not flushed later events yet — fork again "
                "when it pauses or ends") if writer else ""
        raise UserError(
            f"--at {at!r} is not a seq of {loaded.id} (its events on disk are 0..{last}){live}",
            code="BAD_FORK_POINT",
        )
    new_id = session_id or new_session_id()
    directory = ensure_private_dir(Path(sessions_dir))
    path = directory / f"{new_id}.jsonl"
    if path.exists():
        raise LogFormatError(f"a session log already exists at {path}", code="SESSION_EXISTS")
    session = Session.restore(
        new_id,
        loaded.events[: at + 1],
        cwd=loaded.header.cwd,
        created_at=now_ms(),
        mark_seed=False,
        lines=loaded.lines[: at + 1],
    )
    closers = close_interrupted_turn(session, forked_at=at)
    session.append(SessionForked(from_=loaded.id, at=at))
    with SessionLog(session, path) as log:
        log.flush()
    return ForkResult(new_id, path, loaded.id, at, len(closers))


def fork_main(args: Any, *, read_only: Callable[[str], bool]) -> int:
    """``python -m dsh_notebook fork ID_OR_PATH --at SEQ``: prints ``session: <id> log: <path>``
    (``read_only``: which tools only read, for the workspace note)."""
    from ..config import settings_from_env
    from .fork_workspace import workspace_note
    from .inspect import resolve_target

    origin = resolve_target(args.target)
    result = fork_log(origin, args.at, settings_from_env().sessions_dir)
    closed = f", {result.closers} closer{'' if result.closers == 1 else 's'} appended" if result.closers else ""
    print(f"forked {result.origin_id} at seq {result.at}{closed}", file=sys.stderr)
    loaded = load_log(origin)
    print(workspace_note(loaded.events, result.at, loaded.header.cwd, read_only=read_only), file=sys.stderr)
    print(f"session: {result.session_id} log: {result.path}")
    return 0
