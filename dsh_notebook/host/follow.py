"""``session/follow`` (seed 001 L8, object 37): one session's facts and transient frames, with a cursor.

A :class:`SessionHub` exists per followed session. It observes the Core Session (each committed
event) and receives the Agent's transient frames, and fans both out to its followers, in the
order they happen — everything runs on the host loop, so the snapshot and the registration of a
follower are one atomic step and nothing can fall between them.

The items are the types of :mod:`dsh_notebook.wire.follow` (``snapshot``, ``event``,
``assistant-stream``, ``tool-runtime``, ``status``). Events go out as the session's stored JSON
lines, spliced into the items (never parsed again); a transient frame is serialised once for all
followers. A snapshot's ``live`` part is the :class:`RunStateFold` of the frames so far (the
attempt in flight with its chunks, each call's last tool-runtime frame, pending approvals), so a
client that reconnects mid-stream can rebuild its view. A follower of a saved session that is not
live gets a snapshot from the log (``attached: false``) and stays open; if the session is resumed
later, the hub attaches and the follower receives every event after its snapshot — the
crash-repair closers included. Closing a follow never cancels a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import HostError
from ..session.session import Session
from ..wire.base import Encoded, to_json
from ..wire.control import AgentStatus
from ..wire.events import AnyEvent, ToolResult, TurnEnd
from ..wire.follow import (
    AssistantStreamItem,
    AttemptChunk,
    AttemptInFlight,
    FollowStatus,
    PendingApproval,
    ResumedItem,
    RunFrame,
    RunState,
    Snapshot,
    ToolRuntimeItem,
    event_item,
    snapshot_item,
)
from ..wire.frames import StreamChunkFrame, StreamEnd, StreamStart, ToolRuntimeFrame
from ..wire.log import SessionHeader
from ..wire.pause import PausedItem, PausedVariant
from .gateway import StreamSink


@dataclass
class Follower:
    sink: StreamSink
    last_seq: int


@dataclass
class ColdLog:
    """A saved log read for a follower while no agent owns it: its header and stored lines."""

    header: SessionHeader
    lines: list[str]


@dataclass
class RunStateFold:
    """The fold of the transient frames: what a snapshot's ``live`` part says right now."""

    status: AgentStatus = "idle"
    turn: int | None = None
    step: int | None = None
    attempt: StreamStart | None = None
    chunks: list[AttemptChunk] = field(default_factory=list)
    tools: dict[str, ToolRuntimeFrame] = field(default_factory=dict)
    paused: PausedVariant | None = None  # the debugger's pause, while it lasts

    def apply(self, frame: RunFrame) -> None:
        if isinstance(frame, AssistantStreamItem):
            inner = frame.frame
            if isinstance(inner, StreamStart):
                self.attempt, self.chunks = inner, []
            elif self.attempt is None or self.attempt.attempt_id != inner.attempt_id:
                return
            elif isinstance(inner, StreamChunkFrame):
                self.chunks.append(AttemptChunk.model_construct(index=inner.index, time=inner.time, chunk=inner.chunk))
            elif isinstance(inner, StreamEnd):
                self.attempt, self.chunks = None, []
        elif isinstance(frame, ToolRuntimeItem):
            self.tools[frame.frame.call_id] = frame.frame
        elif isinstance(frame, FollowStatus):
            self.status, self.turn, self.step = frame.status, frame.turn, frame.step
        elif isinstance(frame, PausedItem):
            self.paused = frame
        elif isinstance(frame, ResumedItem):
            self.paused = None

    def on_event(self, event: AnyEvent) -> None:
        if isinstance(event, ToolResult):
            self.tools.pop(event.message.tool_call_id, None)
        elif isinstance(event, TurnEnd):
            self.tools.clear()
            self.attempt, self.chunks, self.paused = None, [], None

    def view(self, attached: bool, approvals: list[PendingApproval]) -> RunState:
        a = self.attempt
        assistant = None if a is None else AttemptInFlight.model_construct(
            attempt_id=a.attempt_id, turn=a.turn, step=a.step, started_after_seq=a.started_after_seq,
            chunks=tuple(self.chunks),
        )  # fmt: skip
        return RunState.model_construct(
            attached=attached, status=self.status if attached else "idle", turn=self.turn,
            step=self.step, assistant=assistant, tools=dict(self.tools), approvals=tuple(approvals),
            paused=self.paused if attached else None,
        )  # fmt: skip


class SessionHub:
    """Fan-out of one session's durable events and transient frames to its followers."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.session: Session | None = None
        self.run_state = RunStateFold()
        self.approvals: Callable[[], list[PendingApproval]] = list
        self.followers: list[Follower] = []
        self._unsubscribe: Callable[[], None] | None = None

    # -- wiring -----------------------------------------------------------------------------
    def attach(self, session: Session, approvals: Callable[[], list[PendingApproval]] | None = None) -> None:
        """The session is live: observe it and bring every follower up to its last seq."""
        self.detach()
        self.session = session
        self._unsubscribe = session.subscribe(self._on_event)
        if approvals is not None:
            self.approvals = approvals
        for follower in list(self.followers):
            self._catch_up(follower)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = None
        self.run_state = RunStateFold()

    def on_frame(self, frame: RunFrame) -> None:
        """A transient frame from the Agent or the tool runtime (host loop only)."""
        self.run_state.apply(frame)
        if self.followers:
            encoded = Encoded(to_json(frame))  # serialised once for every follower
            for follower in list(self.followers):
                follower.sink.item(encoded)

    def _on_event(self, event: AnyEvent) -> None:
        self.run_state.on_event(event)
        for follower in list(self.followers):
            self._catch_up(follower)

    def _catch_up(self, follower: Follower) -> None:
        session = self.session
        assert session is not None
        while follower.last_seq < session.last_seq and not follower.sink.closed:
            follower.last_seq += 1
            follower.sink.item(event_item(session.line(follower.last_seq)))

    # -- following --------------------------------------------------------------------------
    def open(self, sink: StreamSink, cursor: int | None, *, cold: ColdLog | None = None,
             window: int | None = None) -> Callable[[], None]:
        """Send the snapshot and register ``sink``. ``cold``: a saved log no agent owns;
        ``window``: send at most the last ``window`` events (the snapshot's ``start`` says where
        they begin; the client reads the rest in pages)."""
        session = self.session
        if session is not None:
            header = SessionHeader.model_construct(id=session.id, cwd=session.cwd, created_at=session.created_at)
            count, attached = len(session), True
        elif cold is not None:
            header, count, attached = cold.header, len(cold.lines), False
        else:
            raise HostError(f"no session {self.session_id!r}", code="UNKNOWN_SESSION")
        last = count - 1
        start = -1 if cursor is None else cursor
        if start > last or start < -1:
            raise HostError(
                f"cursor {start} is outside the log (last seq {last}); follow without a cursor",
                code="BAD_ARGS",
            )
        begins: int | None = None
        if window is not None and last - start > window:
            begins = start = last - window
        lines = [session.line(i) for i in range(start + 1, count)] if session is not None else cold.lines[start + 1 :]  # type: ignore[union-attr]
        snapshot = Snapshot.model_construct(
            session_id=self.session_id, header=header, cursor=last, start=begins,
            live=self.run_state.view(attached, self.approvals() if attached else []),
        )  # fmt: skip
        sink.item(snapshot_item(snapshot, lines))
        follower = Follower(sink, last)
        self.followers.append(follower)

        def close() -> None:
            if follower in self.followers:
                self.followers.remove(follower)

        return close

    def end_all(self) -> None:
        """Host shutdown: end every follow stream."""
        for follower in list(self.followers):
            follower.sink.end()
        self.followers.clear()
