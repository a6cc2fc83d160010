"""``session/rewind`` on the host: a live, idle session's files, conversation and variables back
to the start of a turn; the rewind is logged as ``checkpoint/restored`` on the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..errors import HostError, UserError
from ..wire.endpoints import DiffArgs, RewindArgs, Rewound, TurnDiff
from .diff import file_diffs
from .rewind import (
    FileRewind,
    fork_conversation,
    fork_point,
    restored_event,
    rewind_files,
    timeline,
    turn_changes,
)
from .turns import store_for


def last_turn(tl: Any) -> int:
    turns = [t for t, c in tl.turns.items() if c.taken is not None]
    if not turns:
        raise UserError("this session has no checkpoint yet (no turn ran with checkpoints on)",
                        code="CHECKPOINT_NOT_FOUND")
    return max(turns)


async def rewind_live(registry: Any, live: Any, args: RewindArgs, *, by: str | None = None) -> Rewound:
    if live.agent.status == "running":
        raise HostError(f"session {live.id} is running a turn: stop it (%dsh stop) or wait, then rewind",
                        code="SESSION_BUSY")
    session = live.session
    tl = timeline(session.events, session.cwd)
    to_turn = args.to_turn if args.to_turn is not None else last_turn(tl)
    store = store_for(registry.settings.home)
    fr: FileRewind | None = None
    if args.files:
        only = set(args.paths) if args.paths is not None else None
        fr = await asyncio.to_thread(rewind_files, store, tl, to_turn, force=args.force, dry_run=args.dry_run,
                                     only=only)
    forked = forked_log = None
    if args.conversation:
        fork_point(session.events, tl, to_turn)  # BAD_FORK_POINT before anything is written
        if not args.dry_run:
            await asyncio.to_thread(registry.store.flush, live.id)
            forked, path = await asyncio.to_thread(fork_conversation, Path(live.log_path), list(session.events), tl,
                                                   to_turn, registry.settings.sessions_dir)
            forked_log = str(path)
    names: tuple[str, ...] = ()
    keeper = getattr(live.checkpoints, "variables", None)
    if args.variables and keeper is not None:
        names = tuple(keeper.plan(to_turn) if args.dry_run else keeper.restore(to_turn))
    seq = None
    if not args.dry_run:
        seq = session.append(restored_event(fr, to_turn, forked=forked, variables=names, force=args.force, by=by)).seq
        await asyncio.to_thread(registry.store.flush, live.id)
    plan, out = (fr.plan, fr.outcome) if fr is not None else (None, None)
    return Rewound(
        session_id=live.id, to_turn=to_turn, dry_run=args.dry_run, snapshot=fr.snapshot if fr else None,
        written=tuple(out.written if out else [w for w, _ in plan.writes] if plan else ()),
        removed=tuple(out.removed if out else [*plan.removes, *plan.rmdirs] if plan else ()),
        conflicts=tuple(plan.conflicts) if plan else (),
        failed=tuple(f"{p}: {why}" for p, why in fr.failed) if fr else (),
        variables=names, forked=forked, forked_log=forked_log, restored_seq=seq,
    )


async def diff_live(registry: Any, live: Any, args: DiffArgs) -> TurnDiff:
    """``session/diff``: the diffs of the files turn ``args.turn`` changed (read off the host loop)."""
    tl = timeline(live.session.events, live.session.cwd)
    store = store_for(registry.settings.home)
    only = set(args.paths) if args.paths is not None else None

    def read() -> TurnDiff:
        files = file_diffs(store, turn_changes(store, tl, args.turn), only)
        return TurnDiff(session_id=live.id, turn=args.turn, files=tuple(files))

    return await asyncio.to_thread(read)
