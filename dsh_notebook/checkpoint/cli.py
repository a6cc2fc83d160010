"""``python -m dsh_notebook checkpoints ID_OR_PATH`` and ``rewind ID_OR_PATH --to-turn N …``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..errors import HostError, UserError
from ..wire.base import dump
from ..wire.events import CheckpointRestored
from .rewind import (
    Timeline,
    describe,
    fork_conversation,
    fork_point,
    restored_event,
    rewind_files,
    summary_of,
    timeline,
    turn_diff,
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


def log_restored(path: Path, session_id: str, event: CheckpointRestored) -> None:
    """Append ``checkpoint/restored`` to a saved session that no process is running."""
    from ..session.store import SessionStore

    store = SessionStore(path.parent.parent)
    store.sessions_dir = path.parent
    session = store.resume(session_id)  # SESSION_BUSY when another process writes it
    try:
        session.append(event)
    finally:
        store.close(session_id)


def rewind_main(args: Any) -> int:
    from ..session.logfile import writer_of

    if args.variables:
        raise UserError("--variables needs the live kernel the variables live in: use %dsh rewind N "
                        "--variables or %dsh undo in the notebook", code="VARIABLES_NEED_KERNEL")
    path, loaded, tl = _load(args.target)
    files = args.files or not args.conversation
    writer = writer_of(path)
    if writer is not None and not args.dry_run:
        raise HostError(f"session {loaded.id} is being run by process {writer}: rewind it there "
                        "(%dsh rewind, the rewind endpoint) or when it has ended", code="SESSION_BUSY")
    store = store_for(_home())
    fr = rewind_files(store, tl, args.to_turn, force=args.force, dry_run=args.dry_run) if files else None
    if fr is not None:
        print("\n".join(describe(fr, dry_run=args.dry_run)))
    forked = None
    if args.conversation:
        at = fork_point(loaded.events, tl, args.to_turn)
        if args.dry_run:
            print(f"would fork the conversation of {loaded.id} at seq {at} (before turn {args.to_turn})")
        else:
            from ..config import settings_from_env

            forked, new_path = fork_conversation(path, loaded.events, tl, args.to_turn, settings_from_env().sessions_dir)
            print(f"forked the conversation before turn {args.to_turn}")
            print(f"session: {forked} log: {new_path}")
    if not args.dry_run:
        log_restored(path, loaded.id, restored_event(fr, args.to_turn, forked=forked, force=args.force, by="cli"))
    if fr is not None and fr.failed:
        names = ", ".join(p for p, _ in fr.failed)
        print(f"error: [CHECKPOINT_BLOB_MISSING] these files could not be restored (the rest was): {names}",
              file=sys.stderr)
        return 2
    if fr is not None and fr.plan.conflicts:
        return 1
    return 0
