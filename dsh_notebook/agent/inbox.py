"""The Inbox (seed 001 L5): *when* new input takes effect — next turn or next step.

Two ordered lists, ``next-turn`` and ``next-step``. Every change is one ``splice`` that is
**logged as ``agent/inbox/spliced`` before the live lists change**, so the pending input is a
pure fold of the log and survives a restart (:meth:`Inbox.restore` replays the splices).

- ``followup(msg)`` → ``next-turn`` and wake the driver: it becomes the sole prompt of a turn;
- ``steer(msg)``    → ``next-step`` and wake: it rides along with the running turn's next step;
- ``inject(msg)``   → ``next-step`` without waking: it waits until something else runs a step.

``claim(target, turn)`` removes all of ``next-step`` plus exactly one ``next-turn`` message when
the target is ``next-turn`` (a pure deletion, outcome ``claimed``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..session.session import Session
from ..wire.control import QueueItem
from ..wire.events import InboxSpliced
from ..wire.messages import UserMessage

Target = Literal["next-turn", "next-step"]


@dataclass(frozen=True)
class Pending:
    """One pending message; ``id`` is stable across restarts (``i<splice seq>.<index>``)."""

    id: str
    target: Target
    message: UserMessage

    @property
    def placement(self) -> Literal["queued", "steering", "context"]:
        if self.target == "next-turn":
            return "queued"
        return "steering" if self.message.source.kind == "user" else "context"

    def to_item(self) -> QueueItem:
        """The control-stream form: ``{id, placement, requestId?, text}``."""
        return QueueItem.model_construct(
            id=self.id, placement=self.placement, request_id=self.message.source.request_id or None,
            text="".join(b.text for b in self.message.content),
        )


class Inbox:
    """Pending input of one agent, as a fold of the session's ``agent/inbox/spliced`` events."""

    def __init__(self, session: Session, *, wake: Callable[[], None] | None = None) -> None:
        self.session = session
        self.wake = wake
        self._lists: dict[Target, list[Pending]] = {"next-turn": [], "next-step": []}
        self._listeners: list[Callable[[Inbox], None]] = []

    @classmethod
    def restore(cls, session: Session, *, wake: Callable[[], None] | None = None) -> Inbox:
        """Rebuild the pending lists by replaying every splice in the session's log."""
        inbox = cls(session, wake=wake)
        for event in session.events:
            if isinstance(event, InboxSpliced):
                inbox._apply(event)
        return inbox

    # -- reading ------------------------------------------------------------------------------
    @property
    def next_turn(self) -> tuple[Pending, ...]:
        return tuple(self._lists["next-turn"])

    @property
    def next_step(self) -> tuple[Pending, ...]:
        return tuple(self._lists["next-step"])

    @property
    def has_pending(self) -> bool:
        return bool(self._lists["next-turn"] or self._lists["next-step"])

    def items(self) -> list[QueueItem]:
        """All pending items for the control stream, next-step first (they apply first)."""
        return [p.to_item() for p in (*self._lists["next-step"], *self._lists["next-turn"])]

    def subscribe(self, fn: Callable[[Inbox], None]) -> Callable[[], None]:
        """Call ``fn(inbox)`` after every change. Returns an unsubscribe function."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    # -- sending ------------------------------------------------------------------------------
    def followup(self, message: UserMessage) -> Pending:
        return self.send(message, "next-turn", wake=True)

    def steer(self, message: UserMessage) -> Pending:
        return self.send(message, "next-step", wake=True)

    def inject(self, message: UserMessage) -> Pending:
        return self.send(message, "next-step", wake=False)

    def send(self, message: UserMessage, target: Target, *, wake: bool) -> Pending:
        lst = self._lists[target]
        self.splice(target, len(lst), 0, [message])
        pending = lst[-1]
        if wake and self.wake is not None:
            self.wake()
        return pending

    # -- claiming and editing -----------------------------------------------------------------
    def claim(self, target: Target, turn: int) -> list[UserMessage]:
        """Take all of next-step, plus one next-turn message when ``target`` is next-turn."""
        claimed: list[Pending] = []
        if target == "next-turn" and self._lists["next-turn"]:
            claimed += self.splice("next-turn", 0, 1, outcome="claimed")
        if self._lists["next-step"]:
            claimed += self.splice("next-step", 0, len(self._lists["next-step"]), outcome="claimed")
        return [p.message for p in claimed]

    def remove(self, pending_id: str) -> bool:
        for target, lst in self._lists.items():
            for i, p in enumerate(lst):
                if p.id == pending_id:
                    self.splice(target, i, 1, outcome="canceled")
                    return True
        return False

    def clear(self) -> list[Pending]:
        """Cancel everything pending (outcome ``canceled``)."""
        removed: list[Pending] = []
        for target in ("next-step", "next-turn"):
            if self._lists[target]:
                removed += self.splice(target, 0, len(self._lists[target]), outcome="canceled")
        return removed

    def splice(
        self,
        target: Target,
        start: int,
        delete_count: int = 0,
        inserted: Sequence[UserMessage] = (),
        *,
        outcome: Literal["claimed", "canceled"] | None = None,
    ) -> list[Pending]:
        """The one mutation: normalised like JS ``Array.splice``, logged, then applied."""
        n = len(self._lists[target])
        start = max(n + start, 0) if start < 0 else min(start, n)
        delete_count = max(0, min(delete_count, n - start))
        if delete_count == 0 and not inserted:
            return []
        event = self.session.append(
            InboxSpliced(
                target=target,
                start=start,
                removed_count=delete_count,
                inserted=tuple(inserted),
                outcome=outcome if delete_count else None,
            )
        )  # durable fact first ...
        removed = self._apply(event)  # ... then the live lists change
        for fn in list(self._listeners):
            fn(self)
        return removed

    def _apply(self, event: InboxSpliced) -> list[Pending]:
        lst = self._lists[event.target]
        added = [Pending(f"i{event.seq}.{k}", event.target, m) for k, m in enumerate(event.inserted)]
        removed = lst[event.start : event.start + event.removed_count]
        lst[event.start : event.start + event.removed_count] = added
        return removed

    def __repr__(self) -> str:
        return f"<Inbox next-turn={len(self._lists['next-turn'])} next-step={len(self._lists['next-step'])}>"
