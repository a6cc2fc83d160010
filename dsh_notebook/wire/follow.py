"""``session/follow`` items: one session's durable events and transient frames, with a cursor.

::

    {"type":"snapshot","sessionId","header":<log header>,"cursor","events":[...],"live":{...}}
    {"type":"event","event":<event>}                  one per durable event, seq order, no gaps
    {"type":"assistant-stream","frame":<start|chunk|end>}
    {"type":"tool-runtime","frame":<phase>}
    {"type":"status","status":"idle"|"running","turn","step"}

``live`` (:class:`LiveFrames`) is what the transient frames say right now, so a client that
connects mid-run can rebuild the streaming text, the tool phases and the pending approvals.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, TypeAdapter

from .base import Frozen, Nullable
from .control import AgentStatus
from .events import Event
from .live import AssistantStreamFrame, ToolRuntimeFrame, WireChunk
from .log import SessionHeader


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


class LiveFrames(Nullable):
    """The ``live`` part of a snapshot: the state the transient frames describe."""

    __nullable__: ClassVar[tuple[str, ...]] = ("turn", "step", "assistant")
    attached: bool
    status: AgentStatus
    turn: int | None
    step: int | None
    assistant: AttemptInFlight | None
    tools: dict[str, ToolRuntimeFrame] = Field(default_factory=dict)
    approvals: tuple[PendingApproval, ...] = ()


class Snapshot(Frozen):
    type: Literal["snapshot"] = "snapshot"
    session_id: str
    header: SessionHeader
    cursor: int
    events: tuple[Event, ...] = ()
    live: LiveFrames


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
    Snapshot | EventItem | AssistantStreamItem | ToolRuntimeItem | FollowStatus,
    Field(discriminator="type"),
]
"""One item of a ``session/follow`` stream."""

LiveFrame = AssistantStreamItem | ToolRuntimeItem | FollowStatus
"""What the Agent and the tool runtime emit while they run (the transient follow items)."""

FollowItemAdapter: TypeAdapter[Any] = TypeAdapter(FollowItem)
