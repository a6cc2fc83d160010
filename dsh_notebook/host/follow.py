"""``session/follow`` (seed 001 L8, object 37): one session's facts and live frames, with a cursor.

A :class:`SessionHub` exists per followed session. It observes the Core Session (each committed
event) and receives the Agent's live frames, and fans both out to its followers, in the order
they happen — everything runs on the host loop, so the snapshot and the registration of a
follower are one atomic step and nothing can fall between them.

Items of a follow stream::

    {"type":"snapshot","sessionId","header":{id,cwd,createdAt},"cursor":<last seq or -1>,
     "events":[<events with seq > the client's cursor>],
     "live":{"attached":bool,"status","turn","step","assistant":<active attempt>|null,
             "tools":{callId: <last tool-runtime frame>},"approvals":[...]}}
    {"type":"event","event":{...}}                 one per durable event, seq order, no gaps
    {"type":"assistant-stream","frame":{...}}      transient: start / chunk / end
    {"type":"tool-runtime","frame":{...}}          transient: stage 03 phases
    {"type":"status","status":"idle"|"running","turn","step"}

``live.assistant`` is ``{attemptId, turn, step, startedAfterSeq, chunks:[{index,time,chunk}]}``:
the attempt in flight, so a client that reconnects mid-stream can rebuild its text. A follower of
a saved session that is not live gets a snapshot from the log (``attached: false``) and stays
open; if the session is resumed later, the hub attaches and the follower receives every event
after its snapshot — the crash-repair closers included. Closing a follow never cancels a run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import HostError
from ..session.session import Session
from ..wire.events import ToolResult, TurnEnd
from .gateway import StreamSink


@dataclass
class Follower:
    sink: StreamSink
    last_seq: int


@dataclass
class LiveState:
    """What the live frames say right now (the ``live`` part of a snapshot)."""

    status: str = "idle"
    turn: int | None = None
    step: int | None = None
    assistant: dict[str, Any] | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, frame: dict[str, Any]) -> None:
        kind, inner = frame.get("type"), frame.get("frame") or {}
        if kind == "status":
            self.status = frame.get("status", self.status)
            self.turn, self.step = frame.get("turn"), frame.get("step")
        elif kind == "assistant-stream":
            k = inner.get("kind")
            if k == "start":
                self.assistant = {**{x: inner.get(x) for x in ("attemptId", "turn", "step", "startedAfterSeq")}, "chunks": []}
            elif k == "chunk" and self.assistant and self.assistant["attemptId"] == inner.get("attemptId"):
                self.assistant["chunks"].append({x: inner.get(x) for x in ("index", "time", "chunk")})
            elif k == "end" and self.assistant and self.assistant["attemptId"] == inner.get("attemptId"):
                self.assistant = None
        elif kind == "tool-runtime" and inner.get("callId"):
            self.tools[inner["callId"]] = dict(inner)

    def on_event(self, event: Any) -> None:
        if isinstance(event, ToolResult):
            self.tools.pop(event.message.tool_call_id, None)
        elif isinstance(event, TurnEnd):
            self.tools.clear()
            self.assistant = None


class SessionHub:
    """Fan-out of one session's durable events and live frames to its followers."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.session: Session | None = None
        self.live = LiveState()
        self.approvals: Callable[[], list[Any]] = list
        self.followers: list[Follower] = []
        self._dicts: list[dict[str, Any]] = []
        self._unsubscribe: Callable[[], None] | None = None

    # -- wiring -----------------------------------------------------------------------------
    def attach(self, session: Session, approvals: Callable[[], list[Any]] | None = None) -> None:
        """The session is live: observe it and bring every follower up to its last seq."""
        self.detach()
        self.session = session
        self._dicts = [json.loads(session.line(i)) for i in range(len(session))]
        self._unsubscribe = session.subscribe(self._on_event)
        if approvals is not None:
            self.approvals = approvals
        for follower in list(self.followers):
            self._catch_up(follower)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = None
        self.live = LiveState()

    def on_live(self, frame: dict[str, Any]) -> None:
        """A transient frame from the Agent or the tool runtime (host loop only)."""
        self.live.apply(frame)
        for follower in list(self.followers):
            follower.sink.item(frame)

    def _on_event(self, event: Any) -> None:
        assert self.session is not None
        self._dicts.append(json.loads(self.session.line(event.seq)))
        self.live.on_event(event)
        for follower in list(self.followers):
            self._catch_up(follower)

    def _catch_up(self, follower: Follower) -> None:
        while follower.last_seq + 1 < len(self._dicts) and not follower.sink.closed:
            follower.last_seq += 1
            follower.sink.item({"type": "event", "event": self._dicts[follower.last_seq]})

    # -- following --------------------------------------------------------------------------
    def open(
        self,
        sink: StreamSink,
        cursor: int | None,
        *,
        cold: tuple[dict[str, Any], list[dict[str, Any]]] | None = None,
    ) -> Callable[[], None]:
        """Send the snapshot and register ``sink``. ``cold``: (header, events) of a saved log."""
        if self.session is not None:
            header = {"id": self.session.id, "cwd": self.session.cwd, "createdAt": self.session.created_at}
            events, attached = self._dicts, True
        elif cold is not None:
            (header, events), attached = cold, False
        else:
            raise HostError(f"no session {self.session_id!r}", code="UNKNOWN_SESSION")
        last = len(events) - 1
        start = -1 if cursor is None else cursor
        if start > last or start < -1:
            raise HostError(
                f"cursor {start} is outside the log (last seq {last}); follow without a cursor",
                code="BAD_ARGS",
            )
        sink.item(
            {
                "type": "snapshot",
                "sessionId": self.session_id,
                "header": header,
                "cursor": last,
                "events": events[start + 1 :],
                "live": self.live_snapshot(attached),
            }
        )
        follower = Follower(sink, last)
        self.followers.append(follower)

        def close() -> None:
            if follower in self.followers:
                self.followers.remove(follower)

        return close

    def live_snapshot(self, attached: bool) -> dict[str, Any]:
        live = self.live
        return {
            "attached": attached,
            "status": live.status if attached else "idle",
            "turn": live.turn,
            "step": live.step,
            "assistant": live.assistant,
            "tools": dict(live.tools),
            "approvals": [a.model_dump(mode="json", by_alias=True, exclude_none=True) for a in self.approvals()],
        }

    def end_all(self) -> None:
        """Host shutdown: end every follow stream."""
        for follower in list(self.followers):
            follower.sink.end()
        self.followers.clear()
