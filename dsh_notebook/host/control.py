"""``session/control`` (seed 001 L8, object 38): the host-wide projection of session state.

Items of a control stream are :data:`~dsh_notebook.wire.control.ControlItem` — whole values,
never deltas, so a reconnect simply replaces state::

    {"type":"baseline","sessions":[{"sessionId","status","queue":[item...]}]}   first, once
    {"type":"queue","sessionId","items":[{id,placement,requestId?,text}]}      inbox changed
    {"type":"status","sessionId","status":"idle"|"running"}                   agent status

Queue items come from the Inbox (``placement``: ``queued`` = next turn, ``steering`` = a user
message for the next step, ``context`` = injected context). A session that becomes live (created
or resumed) is announced with a ``status`` then a ``queue`` frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..wire.base import Encoded, to_json
from ..wire.control import (
    AgentStatus,
    Baseline,
    ControlItem,
    ControlSession,
    ControlStatus,
    QueueChanged,
    QueueItem,
)
from .gateway import StreamSink


@dataclass
class _Entry:
    status: AgentStatus = "idle"
    queue: tuple[QueueItem, ...] = ()


class ControlHub:
    """Keeps each live session's status and queue; fans whole-value frames out to sinks."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Entry] = {}
        self._sinks: list[StreamSink] = []
        self.frames_sent = 0

    def baseline(self) -> Baseline:
        return Baseline.model_construct(sessions=tuple(
            ControlSession.model_construct(session_id=sid, status=e.status, queue=e.queue)
            for sid, e in self._sessions.items()
        ))  # fmt: skip

    def open(self, sink: StreamSink) -> Callable[[], None]:
        sink.item(self.baseline())
        self._sinks.append(sink)

        def close() -> None:
            if sink in self._sinks:
                self._sinks.remove(sink)

        return close

    def added(self, session_id: str, status: AgentStatus, queue: Sequence[QueueItem]) -> None:
        self._sessions[session_id] = _Entry(status, tuple(queue))
        self._broadcast(ControlStatus.model_construct(session_id=session_id, status=status))
        self._broadcast(QueueChanged.model_construct(session_id=session_id, items=tuple(queue)))

    def removed(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def status(self, session_id: str, status: AgentStatus) -> None:
        entry = self._sessions.setdefault(session_id, _Entry())
        if entry.status == status:
            return
        entry.status = status
        self._broadcast(ControlStatus.model_construct(session_id=session_id, status=status))

    def queue(self, session_id: str, items: Sequence[QueueItem]) -> None:
        entry = self._sessions.setdefault(session_id, _Entry())
        entry.queue = tuple(items)
        self._broadcast(QueueChanged.model_construct(session_id=session_id, items=entry.queue))

    def status_of(self, session_id: str) -> AgentStatus | None:
        entry = self._sessions.get(session_id)
        return entry.status if entry else None

    def _broadcast(self, frame: ControlItem) -> None:
        encoded: Encoded | None = None
        for sink in list(self._sinks):
            if sink.closed:
                self._sinks.remove(sink)
                continue
            encoded = encoded or Encoded(to_json(frame))  # serialised once for every sink
            sink.item(encoded)
            self.frames_sent += 1

    def end_all(self) -> None:
        for sink in list(self._sinks):
            sink.end()
        self._sinks.clear()
