"""The fold of one session's transient frames (seed 001 L8): what a ``session/follow`` snapshot's
``live`` part says right now — the status, the attempt in flight with its chunks, each call's last
tool-runtime frame, the debugger's pause — so a client that reconnects mid-stream can rebuild its
view. The :class:`~.follow.SessionHub` keeps one and applies every frame and event to it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

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
    ToolRuntimeItem,
)
from ..wire.frames import StreamChunkFrame, StreamEnd, StreamStart, ToolRuntimeFrame
from ..wire.pause import PausedItem, PausedVariant


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

    def copy(self) -> RunStateFold:
        """The fold as it is now (its frames are never changed, its containers are copied)."""
        return dataclasses.replace(self, chunks=list(self.chunks), tools=dict(self.tools))

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
