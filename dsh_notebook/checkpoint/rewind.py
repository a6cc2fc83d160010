"""Rewind a session's workspace (and conversation) to the start of a turn, from its log.

The log is the index of checkpoints: ``checkpoint/taken`` names the snapshot at the start of each
turn, ``checkpoint/changes`` the workspace at its end, ``checkpoint/restored`` a rewind (itself
an event, with the snapshot of the workspace just before and just after it). The **last agent
state** — what the workspace was when the agent last left it — is the ``after`` of the latest
``checkpoint/changes`` or whole ``checkpoint/restored``; a file whose current content differs from
it was changed outside the agent, and a rewind leaves it alone (a conflict) unless forced.

The inspector's per-file decisions are events too (issue 38 item 4): ``checkpoint/reverted`` (a
Revert: those files put back) does not move the last agent state, so a later rewind sees the
reverted files as changed outside the agent and leaves them; ``checkpoint/kept`` (a Keep) makes
rewinds over that turn leave those files as they are, until a Revert of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..wire.events import (
    AnyEvent,
    CheckpointChanges,
    CheckpointKept,
    CheckpointRestored,
    CheckpointReverted,
    CheckpointTaken,
    InboxSpliced,
    TurnStart,
    UserMessageEvent,
)
from .diff import Changes, changes_diff, diff_listings
from .fsat import Tree
from .probe import probe
from .restore import Outcome, Plan, apply_plan, plan_restore, planned_failures
from .store import CheckpointStore, Listing


@dataclass
class TurnCheckpoint:
    turn: int
    start_seq: int | None = None  # its turn/start
    taken: CheckpointTaken | None = None
    changes: CheckpointChanges | None = None


@dataclass
class Timeline:
    cwd: str
    turns: dict[int, TurnCheckpoint] = field(default_factory=dict)
    last_state: str | None = None  # snapshot id of the workspace as the agent last left it
    restores: list[CheckpointRestored] = field(default_factory=list)
    reverts: list[CheckpointReverted] = field(default_factory=list)
    kept: dict[int, set[str]] = field(default_factory=dict)  # turn -> paths the user kept (latest decision)

    def kept_since(self, turn: int) -> frozenset[str]:
        """The paths kept in turn ``turn`` or later (a rewind to its start leaves them)."""
        return frozenset(p for t, paths in self.kept.items() if t >= turn for p in paths)


def timeline(events: Sequence[AnyEvent], cwd: str) -> Timeline:
    out = Timeline(cwd)
    for e in events:
        if isinstance(e, TurnStart):
            out.turns.setdefault(e.turn, TurnCheckpoint(e.turn)).start_seq = e.seq
        elif isinstance(e, CheckpointTaken) and e.turn is not None:
            out.turns.setdefault(e.turn, TurnCheckpoint(e.turn)).taken = e
            out.cwd = e.cwd or out.cwd
            out.last_state = out.last_state or e.snapshot
        elif isinstance(e, CheckpointChanges):
            out.turns.setdefault(e.turn, TurnCheckpoint(e.turn)).changes = e
            out.last_state = e.after
        elif isinstance(e, CheckpointRestored):
            out.restores.append(e)
            out.last_state = e.after or out.last_state
        elif isinstance(e, CheckpointReverted):
            out.reverts.append(e)
            out.kept.get(e.to_turn, set()).difference_update(set(e.paths) - set(e.conflicts))
        elif isinstance(e, CheckpointKept):
            out.kept.setdefault(e.turn, set()).update(e.paths)
    return out


def summary_of(ch: CheckpointChanges | None) -> str:
    """``+2 ~1 -1 files`` (``, 1 renamed``; variables), or ``(no checkpoint at its end)``."""
    if ch is None:
        return "(no changes recorded at its end)"
    a = ch.added_count if ch.added_count is not None else len(ch.added)
    m = ch.modified_count if ch.modified_count is not None else len(ch.modified)
    d = ch.deleted_count if ch.deleted_count is not None else len(ch.deleted)
    text = f"+{a} ~{m} -{d} files"
    moved = sum(1 for f in ch.added if f.renamed_from)
    if moved:
        text += f" ({moved} renamed)"
    if ch.variables:
        text += f", variables: {', '.join(v.name for v in ch.variables)}"
    return text


def turn_changes(store: CheckpointStore, tl: Timeline, turn: int) -> Changes:
    tc = tl.turns.get(turn)
    if tc is None or tc.changes is None:
        raise UserError(f"turn {turn} has no recorded changes (turns with checkpoints: "
                        f"{', '.join(str(t) for t, c in sorted(tl.turns.items()) if c.changes) or 'none'})",
                        code="CHECKPOINT_NOT_FOUND")
    return diff_listings(store.listing(tc.changes.snapshot), store.listing(tc.changes.after))


def turn_diff(store: CheckpointStore, tl: Timeline, turn: int) -> str:
    return changes_diff(store, turn_changes(store, tl, turn))


@dataclass
class FileRewind:
    """A planned (and, unless a dry run, applied) rewind of the workspace's files."""

    to_turn: int
    snapshot: str
    plan: Plan
    cwd: str = ""
    before: str | None = None
    after: str | None = None
    outcome: Outcome | None = None
    last: Listing | None = None

    @property
    def failed(self) -> list[tuple[str, str]]:
        return self.outcome.failed if self.outcome else planned_failures(self.plan)

    @property
    def rolled_back(self) -> bool:
        return bool(self.outcome and self.outcome.rolled_back)

    @property
    def touched(self) -> list[str]:
        return [*self.outcome.written, *self.outcome.removed] if self.outcome else []


def target_of(tl: Timeline, to_turn: int) -> str:
    tc = tl.turns.get(to_turn)
    if tc is None or tc.taken is None:
        have = ", ".join(str(t) for t, c in sorted(tl.turns.items()) if c.taken) or "none"
        raise UserError(f"turn {to_turn} has no checkpoint (turns with one: {have})", code="CHECKPOINT_NOT_FOUND")
    return tc.taken.snapshot


def plan_files(store: CheckpointStore, tl: Timeline, to_turn: int, *, force: bool = False,
               only: set[str] | None = None) -> FileRewind:
    """Plan the rewind of ``tl.cwd`` to the start of ``to_turn`` (conflicts against the last agent
    state, kept files left alone); ``only``: these paths alone (a per-file Revert)."""
    snap = target_of(tl, to_turn)
    target = store.listing(snap)
    current = store.take(tl.cwd)  # also keeps the workspace as it was just before (undoable)
    last: Listing | None = store.listing(tl.last_state) if tl.last_state else None
    excluded = store.excluded(tl.cwd)
    with Tree(tl.cwd) as tree:
        extra, crowded = probe(store, tree, target, current.listing, excluded)
    plan = plan_restore(target, {**current.listing, **extra}, last, only=only, force=force,
                        keep=tl.kept_since(to_turn), excluded=excluded, crowded=crowded)
    return FileRewind(to_turn, snap, plan, cwd=tl.cwd, before=current.id, last=last)


def apply_files(store: CheckpointStore, fr: FileRewind) -> None:
    """Apply a planned file rewind (all of it, or — a step failing — none: ``fr.rolled_back``)."""
    fr.outcome = apply_plan(store, fr.cwd, fr.plan)
    if fr.rolled_back:
        return
    after = store.take(fr.cwd)
    fr.after = after.id
    held = [*fr.plan.conflicts, *fr.plan.kept]
    if held and fr.last is not None:  # still conflicts next time: keep the agent's state of them
        state = dict(after.listing)
        for p in held:
            if p in fr.last:
                state[p] = fr.last[p]
            else:
                state.pop(p, None)
        fr.after = store.save_listing(fr.cwd, state)


def undo_files(store: CheckpointStore, fr: FileRewind) -> list[tuple[str, str]]:
    """Put back what an applied file rewind changed (a later step of the rewind failed); the
    paths that could not be."""
    touched = set(fr.touched) | {p for p, _ in fr.plan.mkdirs}
    if not touched:
        return []
    now = store.take(fr.cwd).listing
    target = dict(now)
    for p in touched:
        prior = fr.plan.prior.get(p)
        if prior is None:
            target.pop(p, None)
        else:
            target[p] = prior
    return apply_plan(store, fr.cwd, plan_restore(target, now, None, only=touched, force=True)).failed


def rewind_files(store: CheckpointStore, tl: Timeline, to_turn: int, *, force: bool = False,
                 dry_run: bool = False, only: set[str] | None = None) -> FileRewind:
    """:func:`plan_files`, then (unless ``dry_run``) :func:`apply_files`."""
    fr = plan_files(store, tl, to_turn, force=force, only=only)
    if not dry_run:
        apply_files(store, fr)
    return fr


def _outcome_fields(fr: FileRewind | None) -> dict[str, object]:
    oc = fr.outcome if fr is not None else None
    return {
        "snapshot": fr.snapshot if fr else None, "before": fr.before if fr else None,
        "after": fr.after if fr else None, "written": tuple(oc.written) if oc else (),
        "removed": tuple(oc.removed) if oc else (), "conflicts": tuple(fr.plan.conflicts) if fr else (),
        "kept": tuple(fr.plan.kept) if fr else (),
        "failed": tuple(f"{p}: {why}" for p, why in fr.failed) if fr else (),
    }


def restored_event(fr: FileRewind | None, to_turn: int, *, forked: str | None = None,
                   variables: Sequence[str] = (), not_restored: Sequence[str] = (), force: bool = False,
                   by: str | None = None, failed: Sequence[str] = (), rolled_back: bool = False) -> CheckpointRestored:
    fields = _outcome_fields(fr)
    if rolled_back or (fr is not None and fr.rolled_back):
        fields.update(after=None, written=(), removed=())
    fields["failed"] = (*fields["failed"], *failed)  # type: ignore[misc]
    return CheckpointRestored.model_validate({
        **fields, "to_turn": to_turn, "variables": tuple(variables), "variables_not_restored": tuple(not_restored),
        "forked": forked, "forced": force or None, "by": by,
        "rolled_back": True if rolled_back or (fr is not None and fr.rolled_back) else None,
    })


def reverted_event(fr: FileRewind, paths: Sequence[str], *, by: str | None = None) -> CheckpointReverted:
    """A per-file Revert as the user's decision (``checkpoint/reverted``)."""
    fields = _outcome_fields(fr)
    return CheckpointReverted.model_validate({**fields, "to_turn": fr.to_turn, "paths": tuple(paths), "by": by,
                                              "rolled_back": True if fr.rolled_back else None})


def describe(fr: FileRewind, *, dry_run: bool) -> list[str]:
    """Lines for a person: what was (or would be) written, removed, left alone, not restored."""
    p = fr.plan
    verb = "would" if dry_run else "did"
    lines = [f"rewind to the start of turn {fr.to_turn} (checkpoint {fr.snapshot}):"]
    done = fr.outcome
    writes = [w for w, _ in p.writes] if done is None else done.written
    removes = [*p.removes, *p.rmdirs] if done is None else done.removed
    lines += [f"  restore {w}" for w in writes] + [f"  remove  {r}" for r in removes]
    lines += [f"  CONFLICT {c} (changed outside the agent since its last turn; --force overwrites)" for c in p.conflicts]
    lines += [f"  kept    {k} (you kept this turn's change to it)" for k in p.kept]
    lines += [f"  FAILED  {f}: {why}" for f, why in fr.failed]
    if fr.rolled_back:
        lines.append("  a step failed: everything this rewind had changed was put back")
    if len(lines) == 1:
        lines.append("  nothing to do: the workspace is as it was")
    lines.append(f"{verb}: {len(writes)} restored, {len(removes)} removed, {len(p.conflicts)} conflict{'' if len(p.conflicts) == 1 else 's'}, "
                 f"{len(p.kept)} kept, {len(fr.failed)} failed")
    return lines


def fork_point(events: Sequence[AnyEvent], tl: Timeline, to_turn: int) -> int:
    """The seq a conversation rewind forks at: the last event before turn ``to_turn`` started and
    before its input was queued (so the fork, resumed, does not run that input again); ``-1``
    when nothing comes before (turn 1)."""
    tc = tl.turns.get(to_turn)
    if tc is None or tc.start_seq is None:
        raise UserError(f"the session has no turn {to_turn}", code="BAD_FORK_POINT")
    claimed = {e.message.source.request_id for e in events
               if isinstance(e, UserMessageEvent) and e.turn == to_turn and e.message.source.request_id}
    first = tc.start_seq
    for e in events[: tc.start_seq]:
        if isinstance(e, InboxSpliced) and any(m.source.request_id in claimed for m in e.inserted):
            first = e.seq
            break
    return first - 1


def fork_conversation(path: Path, events: Sequence[AnyEvent], tl: Timeline, to_turn: int,
                      sessions_dir: Path) -> tuple[str, Path]:
    """A new session holding the conversation before turn ``to_turn`` (``fork``), or an empty one
    in the same workspace when that turn was the first (``session/forked`` at ``-1``: none of the
    origin's events) — either way it names its origin, whose checkpoints a later rewind uses."""
    from ..session.fork import fork_log
    from ..session.store import SessionStore
    from ..wire.events import SessionForked

    at = fork_point(events, tl, to_turn)
    if at >= 0:
        res = fork_log(path, at, sessions_dir)
        return res.session_id, res.path
    store = SessionStore(sessions_dir.parent)
    store.sessions_dir = sessions_dir
    session = store.create(tl.cwd)
    try:
        session.append(SessionForked(from_=path.stem, at=-1))
    finally:
        store.close(session.id)
    return session.id, store.path_for(session.id)


def home_of_log(path: Path) -> Path | None:
    """``$DSH_HOME`` of a log stored as ``$DSH_HOME/sessions/ID.jsonl``, else None."""
    return path.parent.parent if path.parent.name == "sessions" else None
