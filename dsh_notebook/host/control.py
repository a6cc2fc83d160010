"""``session/control`` (seed 001 L8, object 38): the host-wide projection of session state.

Items of a control stream — whole values, never deltas, so a reconnect simply replaces state::

    {"type":"baseline","sessions":[{"sessionId","status","queue":[item...]}]}   first, once
    {"type":"queue","sessionId","items":[{id,placement,requestId?,text}]}      inbox changed
    {"type":"status","sessionId","status":"idle"|"running"}                   agent status

Queue items come from the Inbox (``placement``: ``queued`` = next turn, ``steering`` = a user
message for the next step, ``context`` = injected context). A session that becomes live (created
or resumed) is announced with a ``status`` then a ``queue`` frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .gateway import StreamSink


@dataclass
class _Entry:
    status: str = "idle"
    queue: list[dict[str, Any]] = field(default_factory=list)


class ControlHub:
    """Keeps each live session's status and queue; fans whole-value frames out to sinks."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Entry] = {}
        self._sinks: list[StreamSink] = []
        self.frames_sent = 0

    def baseline(self) -> dict[str, Any]:
        return {
            "type": "baseline",
            "sessions": [
                {"sessionId": sid, "status": e.status, "queue": list(e.queue)}
                for sid, e in self._sessions.items()
            ],
        }

    def open(self, sink: StreamSink) -> Callable[[], None]:
        sink.item(self.baseline())
        self._sinks.append(sink)

        def close() -> None:
            if sink in self._sinks:
                self._sinks.remove(sink)

        return close

    def added(self, session_id: str, status: str, queue: list[dict[str, Any]]) -> None:
        self._sessions[session_id] = _Entry(status, list(queue))
        self._broadcast({"type": "status", "sessionId": session_id, "status": status})
        self._broadcast({"type": "queue", "sessionId": session_id, "items": list(queue)})

    def removed(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def status(self, session_id: str, status: str) -> None:
        entry = self._sessions.setdefault(session_id, _Entry())
        if entry.status == status:
            return
        entry.status = status
        self._broadcast({"type": "status", "sessionId": session_id, "status": status})

    def queue(self, session_id: str, items: list[dict[str, Any]]) -> None:
        entry = self._sessions.setdefault(session_id, _Entry())
        entry.queue = list(items)
        self._broadcast({"type": "queue", "sessionId": session_id, "items": list(items)})

    def status_of(self, session_id: str) -> str | None:
        entry = self._sessions.get(session_id)
        return entry.status if entry else None

    def _broadcast(self, frame: dict[str, Any]) -> None:
        for sink in list(self._sinks):
            if sink.closed:
                self._sinks.remove(sink)
                continue
            sink.item(frame)
            self.frames_sent += 1

    def end_all(self) -> None:
        for sink in list(self._sinks):
            sink.end()
        self._sinks.clear()
