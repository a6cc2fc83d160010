"""``session/rewind``, ``session/keep`` and ``session/diff`` on the host.

A rewind of a live, idle session puts its files, conversation and variables back to the start of
a turn, **all of it or none** (issue 35 finding 13): first everything is prepared — the fork point
checked, every kept variable read back, the file plan made and its blobs checked — then the files
are applied (undone by themselves if a step fails), the conversation forked (the files put back if
that fails), the variables set (plain dict work). The outcome, whatever it is, is logged:
``checkpoint/restored``, or ``checkpoint/reverted`` for a rewind of some ``paths`` (the inspector's
per-file Revert). The session's :attr:`~.turns.TurnCheckpoints.rewinding` lock is held throughout,
so a turn starting meanwhile waits for it (the log's writer lock is the host's already).

A session with no checkpoint of the turn that is the conversation a rewind forked (the notebook's
current session after ``%dsh rewind``) is rewound through the session that owns the checkpoints
(:mod:`.owner`): ``--force`` after a conflict acts where the conflict was.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..errors import DshError, HostError, UserError
from ..wire.endpoints import DiffArgs, KeepArgs, KeptFiles, RewindArgs, Rewound, TurnDiff
from ..wire.events import CheckpointKept, RewindOutcome
from .diff import file_diffs
from .entry import failure
from .owner import has_checkpoint, rewind_owner
from .rewind import (
    FileRewind,
    Timeline,
    apply_files,
    fork_conversation,
    fork_point,
    plan_files,
    restored_event,
    reverted_event,
    timeline,
    turn_changes,
    undo_files,
)
from .turns import store_for
from .variables import VariablePlan


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
    if not has_checkpoint(session.events, args.to_turn):
        owner = await asyncio.to_thread(rewind_owner, live.id, list(session.events), registry.settings.sessions_dir)
        if owner is not None:  # the conversation a rewind forked: its owner has the checkpoints
            origin, _ = await registry.resolve(owner.session_id)
            to_turn = args.to_turn if args.to_turn is not None else owner.turn
            delegated = args.model_copy(update={"session_id": origin.id, "to_turn": to_turn, "conversation": False})
            return await rewind_live(registry, origin, delegated, by=by)
    tc = live.checkpoints
    if tc is None:
        raise UserError("checkpoints are off for this session (DSH_CHECKPOINTS=0)", code="CHECKPOINT_NOT_FOUND")
    async with tc.rewinding:
        return await _rewind(registry, live, tc, args, by)


async def _rewind(registry: Any, live: Any, tc: Any, args: RewindArgs, by: str | None) -> Rewound:
    session = live.session
    tl = timeline(session.events, session.cwd)
    to_turn = args.to_turn if args.to_turn is not None else last_turn(tl)
    store = store_for(registry.settings.home)
    only = set(args.paths) if args.paths is not None else None
    conversation = args.conversation and only is None
    variables = args.variables and only is None
    # prepare: nothing changes until everything that can be checked was
    if conversation:
        fork_point(session.events, tl, to_turn)  # BAD_FORK_POINT before anything is written
    vplan: VariablePlan | None = tc.variables.prepare(to_turn) if variables else None
    fr: FileRewind | None = None
    if args.files or only is not None:
        fr = await asyncio.to_thread(plan_files, store, tl, to_turn, force=args.force, only=only)
    if args.dry_run:
        return _answer(live.id, to_turn, fr, vplan, dry_run=True)
    forked = forked_log = None
    names: list[str] = []
    failed: list[str] = []
    rolled_back = False
    if fr is not None:
        await asyncio.to_thread(apply_files, store, fr)
        rolled_back = fr.rolled_back
    if conversation and not rolled_back:
        try:
            await asyncio.to_thread(registry.store.flush, live.id)
            forked, path = await asyncio.to_thread(fork_conversation, Path(live.log_path), list(session.events), tl,
                                                   to_turn, registry.settings.sessions_dir)
            forked_log = str(path)
        except DshError as exc:  # the files go back as they were: nothing of the rewind stays
            lost = await asyncio.to_thread(undo_files, store, fr) if fr is not None else []
            failed += [": ".join(failure("(conversation)", f"{exc.message}; the files were put back", code=exc.code)),
                       *(f"{p}: {why}" for p, why in lost)]
            rolled_back = True
    if vplan is not None and not rolled_back:
        names = tc.variables.apply(vplan)
    if only is not None and fr is not None:
        event: Any = reverted_event(fr, tuple(args.paths or ()), by=by)
    else:
        event = restored_event(fr, to_turn, forked=forked, variables=names,
                               not_restored=vplan.failed if vplan is not None else (), force=args.force, by=by,
                               failed=failed, rolled_back=rolled_back)
    seq = session.append(event).seq
    await asyncio.to_thread(registry.store.flush, live.id)
    outcome = {name: getattr(event, name) for name in RewindOutcome.model_fields}
    return Rewound(**outcome, session_id=live.id, dry_run=False, forked_log=forked_log, restored_seq=seq)


def _answer(session_id: str, to_turn: int, fr: FileRewind | None, vplan: VariablePlan | None, *,
            dry_run: bool) -> Rewound:
    plan = fr.plan if fr is not None else None
    return Rewound(
        session_id=session_id, to_turn=to_turn, dry_run=dry_run, snapshot=fr.snapshot if fr else None,
        written=tuple(w for w, _ in plan.writes) if plan else (),
        removed=(*plan.removes, *plan.rmdirs) if plan else (),
        conflicts=tuple(plan.conflicts) if plan else (), kept=tuple(plan.kept) if plan else (),
        failed=tuple(f"{p}: {why}" for p, why in fr.failed) if fr else (),
        variables=tuple(vplan.names) if vplan else (), variables_not_restored=tuple(vplan.failed) if vplan else (),
    )


async def keep_live(registry: Any, live: Any, args: KeepArgs, *, by: str | None = None) -> KeptFiles:
    """``session/keep``: the user keeps what turn ``args.turn`` did to ``args.paths``."""
    tl: Timeline = timeline(live.session.events, live.session.cwd)
    store = store_for(registry.settings.home)
    changes = await asyncio.to_thread(turn_changes, store, tl, args.turn)
    changed = {p for p, _ in changes.added} | {p for p, _, _ in changes.modified} | {p for p, _ in changes.deleted}
    unknown = sorted(set(args.paths) - changed)
    if unknown or not args.paths:
        raise UserError(f"turn {args.turn} did not change {', '.join(unknown) or '(no path given)'}: only the files "
                        "it changed can be kept", code="BAD_ARGS")
    seq = live.session.append(CheckpointKept(turn=args.turn, paths=tuple(args.paths), by=by)).seq
    await asyncio.to_thread(registry.store.flush, live.id)
    return KeptFiles(session_id=live.id, turn=args.turn, paths=tuple(args.paths), kept_seq=seq)


async def diff_live(registry: Any, live: Any, args: DiffArgs) -> TurnDiff:
    """``session/diff``: the diffs of the files turn ``args.turn`` changed (read off the host loop)."""
    tl = timeline(live.session.events, live.session.cwd)
    store = store_for(registry.settings.home)
    only = set(args.paths) if args.paths is not None else None

    def read() -> TurnDiff:
        files = file_diffs(store, turn_changes(store, tl, args.turn), only)
        return TurnDiff(session_id=live.id, turn=args.turn, files=tuple(files))

    return await asyncio.to_thread(read)
