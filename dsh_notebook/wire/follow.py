"""``session/follow`` items: one session's durable events and transient frames, with a cursor.

::

    {"type":"snapshot","sessionId","header":<log header>,"cursor","events":[...],"live":{...}}
    {"type":"event","event":<event>}                  one per durable event, seq order, no gaps
    {"type":"assistant-stream","frame":<start|chunk|end>}
    {"type":"tool-runtime","frame":<phase>}
    {"type":"status","status":"idle"|"running","turn","step"}

A snapshot's ``live`` part (:class:`RunState`) is what the transient frames say right now, so a
client that connects mid-run can rebuild the streaming text, the tool phases and the pending
approvals. (In Python, "live" names only a session an agent owns in this host; the transient
frames are :data:`RunFrame`, their sink a :data:`FrameSink`, and their fold a ``RunState``.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, TypeAdapter

from .base import Encoded, Frozen, Nullable, to_json
from .control import AgentStatus
from .events import DebugStage, Event
from .frames import AssistantStreamFrame, ToolRuntimeFrame, WireChunk
from .log import SessionHeader
from .pause import AnyPausedItem


class PendingApproval(Frozen):
    """A tool call waiting for a client's ``session/approve``."""

    call_id: str
    name: str
    arguments: str
    reason: str | None = None


class AttemptChunk(Frozen):
    index: int
    time: int
    chunk: WireChunk


class AttemptInFlight(Frozen):
    """The model attempt streaming now, with every chunk so far."""

    attempt_id: str
    turn: int
    step: int
    started_after_seq: int
    chunks: tuple[AttemptChunk, ...] = ()


class ResumedItem(Frozen):
    """The paused run goes on: to the next breakpoint (``continue``), the next stage (``step``),
    or it was cancelled while paused (``cancel``)."""

    type: Literal["resumed"] = "resumed"
    stage: DebugStage
    how: Literal["continue", "step", "cancel"]


class RunState(Nullable):
    """The ``live`` part of a snapshot: the state the transient frames describe."""

    __nullable__: ClassVar[tuple[str, ...]] = ("turn", "step", "assistant")
    attached: bool
    status: AgentStatus
    turn: int | None
    step: int | None
    assistant: AttemptInFlight | None
    tools: dict[str, ToolRuntimeFrame] = Field(default_factory=dict)
    approvals: tuple[PendingApproval, ...] = ()
    paused: AnyPausedItem | None = None


class Snapshot(Frozen):
    """The session as the follow opens: its header, last seq (``cursor``), the events after the
    client's cursor and the live part. ``start``: the follow asked for a window and the events
    begin after this seq — the client holds nothing before it (it pages the rest in)."""

    type: Literal["snapshot"] = "snapshot"
    session_id: str
    header: SessionHeader
    cursor: int
    start: int | None = None
    events: tuple[Event, ...] = ()
    live: RunState


class EventItem(Frozen):
    type: Literal["event"] = "event"
    event: Event


class AssistantStreamItem(Frozen):
    type: Literal["assistant-stream"] = "assistant-stream"
    frame: AssistantStreamFrame


class ToolRuntimeItem(Frozen):
    type: Literal["tool-runtime"] = "tool-runtime"
    frame: ToolRuntimeFrame


class FollowStatus(Nullable):
    __nullable__: ClassVar[tuple[str, ...]] = ("turn", "step")
    type: Literal["status"] = "status"
    status: AgentStatus
    turn: int | None
    step: int | None


FollowItem = Annotated[
    Snapshot | EventItem | AssistantStreamItem | ToolRuntimeItem | FollowStatus | AnyPausedItem | ResumedItem,
    Field(discriminator="type"),
]
"""One item of a ``session/follow`` stream."""

RunFrame = AssistantStreamItem | ToolRuntimeItem | FollowStatus
"""What the Agent and the tool runtime emit while they run (the transient follow items)."""

FrameSink = Callable[[RunFrame], None]
"""Where an Agent or a ToolRuntime sends its transient frames (the host's SessionHub)."""

FollowItemAdapter: TypeAdapter[Any] = TypeAdapter(FollowItem)


def event_item(event_line: str) -> Encoded:
    """The ``event`` item of one stored event line (spliced: no parse, no re-serialisation)."""
    return Encoded(f'{{"type":"event","event":{event_line}}}')


def snapshot_item(snapshot: Snapshot, event_lines: list[str]) -> Encoded:
    """``snapshot`` (built without events) with the stored ``event_lines`` spliced in."""
    head = to_json(snapshot.model_copy(update={"events": ()}))
    assert head.endswith("}")
    return Encoded(f'{head[:-1]},"events":[{",".join(event_lines)}]}}')
