"""``%dsh rewind [N]``, ``%dsh undo``, ``%dsh changes [TURN]`` and ``%dsh checkpoints [ID]`` (checkpoints,
issue 26).

In the notebook a rewind with no ``--files`` / ``--conversation`` / ``--variables`` does all
three: the workspace's files and the variables the turns' ``python`` calls changed go back to the
start of turn N, and the conversation forks before it (the fork becomes the current session, so
the agent no longer remembers the undone turns). ``%dsh undo`` is ``%dsh rewind`` of the last turn.
``%dsh rewind`` takes the CLI's spellings too (``--to-turn N``, a session id or log path). After
a rewind that left a conflict, ``%dsh rewind N --force`` on the fork it made acts on the session
that owns the checkpoints (the host finds it).
"""

from __future__ import annotations

from typing import Any

from ...cmdline import checks
from ...cmdline.dsh_line import MagicArgs
from ...errors import UserError


class DiffView:
    """A turn's changed files as unified diffs (text; HTML with a ``<pre>``)."""

    def __init__(self, title: str, text: str) -> None:
        self.title, self.text = title, text

    def __repr__(self) -> str:
        return f"{self.title}\n{self.text}" if self.text else f"{self.title}\n(no file changes)"

    def _repr_html_(self) -> str:
        import html

        return f"<b>{html.escape(self.title)}</b><pre>{html.escape(self.text or '(no file changes)')}</pre>"


def _turn(args: MagicArgs) -> int | None:
    raw = args.options.get("turn")
    return int(raw) if raw is not None else None


def rewind_command(magics: Any, args: MagicArgs, *, undo: bool) -> None:
    session_id = args.session or magics.current_session
    if session_id is not None and session_id.endswith(".jsonl"):
        from pathlib import Path

        session_id = Path(session_id).stem  # a log path, as the CLI takes it: its session
    if session_id is None:
        raise UserError("no session yet: nothing to rewind", code="NO_SESSION")
    opts = args.options
    chosen = {k for k in ("files", "conversation", "variables") if k in opts}
    every = not chosen
    done = magics.link.remote.session.rewind(
        session_id=session_id, to_turn=None if undo else _turn(args),
        files=every or "files" in chosen, conversation=every or "conversation" in chosen,
        variables=every or "variables" in chosen, dry_run="dry-run" in opts, force="force" in opts,
    )
    verb = "would" if done.dry_run else "did"
    of = session_id if done.session_id == session_id else f"{done.session_id} (whose rewind forked {session_id})"
    print(f"dsh: rewind of {of} to the start of turn {done.to_turn} ({verb}):")
    for path in done.written:
        print(f"  restore {path}")
    for path in done.removed:
        print(f"  remove  {path}")
    for path in done.conflicts:
        print(f"  CONFLICT {path} (changed outside the agent since its last turn; --force overwrites)")
    for path in done.kept:
        print(f"  kept    {path} (you kept this turn's change to it)")
    for failed in done.failed:
        print(f"  FAILED  {failed}")
    if done.rolled_back:
        print("  a step failed: everything this rewind had changed was put back")
    if done.variables:
        print(f"  variables put back: {', '.join(done.variables)}")
    for why in done.variables_not_restored:
        print(f"  variable not restored: {why}")
    if done.forked:
        magics.current_session = done.forked
        magics.remember(done.forked)
        print(f"  conversation: forked before turn {done.to_turn} as {done.forked}; it is now the current session")
    if not (done.written or done.removed or done.conflicts or done.kept or done.failed or done.variables
            or done.variables_not_restored or done.forked):
        print("  nothing to do: the workspace is as it was")


def changes_command(magics: Any, args: MagicArgs) -> DiffView:
    from ...checkpoint.rewind import summary_of, timeline, turn_diff
    from ...checkpoint.turns import store_for
    from ...session.persistence import load_log

    session_id = args.session or magics.current_session
    if session_id is None:
        raise UserError("no session yet: no changes to show", code="NO_SESSION")
    loaded = load_log(magics.log_path(session_id))
    tl = timeline(loaded.events, loaded.header.cwd)
    done = [t for t, c in tl.turns.items() if c.changes is not None]
    turn = _turn(args) or (max(done) if done else None)
    if turn is None:
        raise UserError(f"{session_id} has no turn with recorded changes yet", code="CHECKPOINT_NOT_FOUND")
    tc = tl.turns.get(turn)
    title = f"turn {turn} of {session_id}: {summary_of(tc.changes if tc else None)}"
    return DiffView(title, turn_diff(store_for(magics.link.host.settings.home), tl, turn))


def checkpoints_command(magics: Any, args: MagicArgs) -> DiffView | None:
    """``%dsh checkpoints [ID] [--diff TURN]``: the CLI's listing of a session's turns with their
    checkpoints and file changes, or one turn's changes as unified diffs."""
    from ...checkpoint.cli import listing_lines
    from ...checkpoint.rewind import timeline, turn_diff
    from ...checkpoint.turns import store_for
    from ...session.persistence import load_log

    session_id = args.target or args.session or magics.current_session
    if session_id is None:
        raise UserError("no session yet: run a prompt first, or %dsh checkpoints ID (ids: %dsh sessions)",
                        code="NO_SESSION")
    loaded = load_log(magics.log_path(session_id))
    tl = timeline(loaded.events, loaded.header.cwd)
    if "diff" in args.options:
        turn = checks.turn(args.options["diff"], "--diff")
        return DiffView(f"turn {turn} of {loaded.id}", turn_diff(store_for(magics.link.host.settings.home), tl, turn))
    print(f"session {loaded.id}  workspace {tl.cwd}")
    print("\n".join(listing_lines(tl)))
    return None
