"""``python -m dsh_notebook checkpoints ID_OR_PATH`` and ``rewind ID_OR_PATH --to-turn N …``.

A rewind (not a dry run) holds the session's writer lock from before it plans until its
``checkpoint/restored`` is written: a ``run`` of the session started meanwhile is ``SESSION_BUSY``
(issue 35). Files and conversation are all-or-nothing: a fork that fails puts the files back.
Every failure is printed with its own code (``CHECKPOINT_UNSAFE_PATH``, ``CHECKPOINT_BLOB_MISSING``,
``DISK_FULL`` …); exit 1 for conflicts, 2 for failures."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..errors import DshError, HostError, UserError
from ..wire.base import dump
from .entry import failure
from .owner import has_checkpoint, rewind_owner
from .rewind import (
    Timeline,
    apply_files,
    describe,
    fork_conversation,
    fork_point,
    plan_files,
    restored_event,
    summary_of,
    timeline,
    turn_diff,
    undo_files,
)
from .turns import store_for


def _load(target: str) -> tuple[Path, Any, Timeline]:
    from ..session.inspect import resolve_target
    from ..session.persistence import load_log

    path = resolve_target(target)
    loaded = load_log(path)
    return path, loaded, timeline(loaded.events, loaded.header.cwd)


def _home() -> Path:
    from ..config import settings_from_env

    return settings_from_env().home


def listing_lines(tl: Timeline) -> list[str]:
    lines: list[str] = []
    for turn, tc in sorted(tl.turns.items()):
        snap = tc.taken.snapshot if tc.taken else "(none)"
        lines.append(f"turn {turn}  checkpoint {snap}  {summary_of(tc.changes)}")
        ch = tc.changes
        if ch is None:
            continue
        moved = {f.renamed_from for f in ch.added if f.renamed_from}
        for f in ch.added:
            lines.append(f"  > {f.renamed_from} -> {f.path}" if f.renamed_from else f"  + {f.path} ({f.size} B)")
        lines += [f"  ~ {f.path} ({f.before_size} -> {f.size} B)" for f in ch.modified]
        lines += [f"  - {f.path}" for f in ch.deleted if f.path not in moved]
        lines += [f"  variable {v.name}: {v.change}" + ("" if v.restorable else f" (not restorable: {v.why})")
                  for v in ch.variables]
    for k in tl.reverts:
        lines.append(f"reverted {', '.join(k.paths)} of turn {k.to_turn}: {len(k.written)} restored, "
                     f"{len(k.removed)} removed, {len(k.conflicts)} conflicts")
    for t, kept in sorted(tl.kept.items()):
        if kept:
            lines.append(f"kept from turn {t}: {', '.join(sorted(kept))}")
    for r in tl.restores:
        lines.append(f"rewound to turn {r.to_turn}: {len(r.written)} restored, {len(r.removed)} removed, "
                     f"{len(r.conflicts)} conflict{'' if len(r.conflicts) == 1 else 's'}" + (f", forked {r.forked}" if r.forked else ""))
    if not lines:
        lines.append("no checkpoints in this session (DSH_CHECKPOINTS=0, or no turn yet)")
    return lines


def checkpoints_main(args: Any) -> int:
    path, loaded, tl = _load(args.target)
    if args.diff is not None:
        sys.stdout.write(turn_diff(store_for(_home()), tl, args.diff))
        return 0
    if args.json:
        print(json.dumps({"sessionId": loaded.id, "cwd": tl.cwd, "turns": [
            {"turn": t, "taken": dump(c.taken) if c.taken else None,
             "changes": dump(c.changes) if c.changes else None} for t, c in sorted(tl.turns.items())]}))
        return 0
    print(f"session {loaded.id}  workspace {tl.cwd}")
    print("\n".join(listing_lines(tl)))
    return 0


def _failure_code(failed: list[str]) -> str:
    """The code of the first failure (``path: CODE: why``)."""
    for line in failed:
        for part in line.split(": ")[1:2]:
            if part.isupper() and "_" in part:
                return part
    return "CHECKPOINT_FAILED"


def _lock(path: Path, session_id: str) -> tuple[Any, Any]:
    """The session's writer lock, held for the whole rewind (``SESSION_BUSY`` when a run, a
    kernel or a host writes it): a run started meanwhile is refused."""
    from ..session.store import SessionStore

    store = SessionStore(path.parent.parent)
    store.sessions_dir = path.parent
    try:
        session = store.resume(session_id)
    except HostError:
        raise
    except Exception as exc:
        code = getattr(exc, "code", "")
        if code == "SESSION_BUSY":
            raise HostError(f"session {session_id} is being run by another process: rewind it there (%dsh rewind, "
                            "the rewind endpoint) or when it has ended", code="SESSION_BUSY") from None
        raise
    return store, session


def rewind_main(args: Any) -> int:
    if args.variables:
        raise UserError("--variables needs the live kernel the variables live in: use %dsh rewind N "
                        "--variables or %dsh undo in the notebook", code="VARIABLES_NEED_KERNEL")
    from ..config import settings_from_env

    path, loaded, tl = _load(args.target)
    conversation = args.conversation
    if not has_checkpoint(loaded.events, args.to_turn):
        owner = rewind_owner(loaded.id, loaded.events, path.parent)
        if owner is not None:  # the conversation a rewind forked: the rewind's session has the checkpoints
            print(f"{loaded.id} is the conversation a rewind of {owner.session_id} forked: rewinding the files of "
                  f"{owner.session_id}", file=sys.stderr)
            path, loaded, tl = _load(str(owner.path))
            conversation = False
    files = args.files or not args.conversation
    store = store_for(_home())
    held = _lock(path, loaded.id) if not args.dry_run else None
    try:
        if held is not None:  # the log as the lock holder sees it (no writer can add to it now)
            tl = timeline(held[1].events, loaded.header.cwd)
        fr = plan_files(store, tl, args.to_turn, force=args.force) if files else None
        if conversation:
            fork_point(loaded.events, tl, args.to_turn)  # BAD_FORK_POINT before anything changes
        failed: list[str] = []
        forked = new_path = None
        if fr is not None and not args.dry_run:
            apply_files(store, fr)
        if conversation and not args.dry_run and not (fr is not None and fr.rolled_back):
            try:
                forked, new_path = fork_conversation(path, loaded.events, tl, args.to_turn, settings_from_env().sessions_dir)
            except DshError as exc:  # the files go back as they were
                lost = undo_files(store, fr) if fr is not None else []
                failed += [": ".join(failure("(conversation)", f"{exc.message}; the files were put back", code=exc.code)),
                           *(f"{p}: {why}" for p, why in lost)]
        if fr is not None:
            print("\n".join(describe(fr, dry_run=args.dry_run)), flush=True)
        if conversation and args.dry_run:
            print(f"would fork the conversation of {loaded.id} at seq {fork_point(loaded.events, tl, args.to_turn)} "
                  f"(before turn {args.to_turn})")
        elif forked is not None:
            print(f"forked the conversation before turn {args.to_turn}")
            print(f"session: {forked} log: {new_path}")
        if held is not None:
            held[1].append(restored_event(fr, args.to_turn, forked=forked, force=args.force, by="cli", failed=failed,
                                          rolled_back=bool(failed)))
    finally:
        if held is not None:
            held[0].close(loaded.id)
    problems = [*(f"{p}: {why}" for p, why in (fr.failed if fr is not None else [])), *failed]
    if problems:
        what = "nothing was changed (rolled back)" if failed or (fr is not None and fr.rolled_back) else "the rest was"
        print(f"error: [{_failure_code(problems)}] these could not be restored ({what}): "
              f"{', '.join(p.split(': ')[0] for p in problems)}", file=sys.stderr)
        return 2
    if fr is not None and fr.plan.conflicts:
        return 1
    return 0
