"""How ``compare`` numbers the turns of a fork as its origin's (issue 38 item 5).

A fork made inside turn *k* (``fork ID --at SEQ``) repeats the origin's events ``0..SEQ``, then
ends turn *k* there (``turn/end`` reason ``interrupted``, cause ``fork``); what the fork runs next
— a replay of the same prompt, or another one — is turn *k+1* of the fork's log. Compared turn
by turn with the origin, that re-run is the origin's turn *k*: the fork's turns after the fork
point are numbered one lower, and the part of turn *k* the fork copied (its requests are the
origin's own, the same events) gives way to the re-run. A fork made between turns keeps its
numbers. Two logs that are no fork of one another are compared as they are numbered.

Which log is the fork is read from the logs themselves: the ``session/forked {from, at}`` event of
one, at whose ``at`` both logs hold the same event (the last such event of a fork of a fork).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..wire.events import AnyEvent, SessionForked, TurnEnd

__all__ = ["TurnAlignment", "align_turns"]


@dataclass(frozen=True)
class TurnAlignment:
    """One log's turns as the comparison numbers them.

    ``at``: the fork point when this log is the other's fork; ``cut``: the turn the fork ended
    there (its later turns are numbered one lower); ``rerun``: whether a later turn re-runs it
    (then the copied requests of ``cut`` at or before ``at`` are left out)."""

    at: int | None = None
    cut: int | None = None
    rerun: bool = False

    def turn(self, turn: int) -> int:
        """The turn number in the comparison of this log's ``turn``."""
        return turn - 1 if self.cut is not None and turn > self.cut else turn

    def keeps(self, turn: int, seq: int) -> bool:
        """Whether the request at ``seq`` (of this log's ``turn``) takes part in the comparison."""
        return not (self.rerun and turn == self.cut and self.at is not None and seq <= self.at)

    @property
    def renumbered(self) -> bool:
        return self.cut is not None


def _fork_point(fork: Sequence[AnyEvent], origin: Sequence[AnyEvent]) -> int | None:
    """The ``at`` of the last ``session/forked`` of ``fork`` where both logs hold the same event."""
    found = None
    for ev in fork:
        if not isinstance(ev, SessionForked) or not 0 <= ev.at < min(len(origin), len(fork)):
            continue
        if ev.seq < len(origin) and origin[ev.seq] == ev:
            continue  # the origin holds this fork point too (the same log, or a fork copied it)
        if fork[ev.at] == origin[ev.at]:
            found = ev.at
    return found


def _alignment(fork: Sequence[AnyEvent], at: int) -> TurnAlignment:
    cut = next((e.turn for e in fork[at + 1:] if isinstance(e, TurnEnd) and e.reason.cause == "fork"), None)
    if cut is None:
        return TurnAlignment(at=at)  # forked between turns: the numbers already agree
    rerun = any(getattr(e, "turn", None) == cut + 1 for e in fork[at + 1:])
    return TurnAlignment(at=at, cut=cut, rerun=rerun)


def align_turns(a: Sequence[AnyEvent], b: Sequence[AnyEvent]) -> tuple[TurnAlignment, TurnAlignment]:
    """How ``a``'s and ``b``'s turns are numbered in their comparison (see the module text)."""
    at = _fork_point(b, a)
    if at is not None:
        return TurnAlignment(), _alignment(b, at)
    at = _fork_point(a, b)
    if at is not None:
        return _alignment(a, at), TurnAlignment()
    return TurnAlignment(), TurnAlignment()
