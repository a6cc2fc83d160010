"""Transient frames of a run (never durable): the model stream and the tool runtime's phases.

``assistant-stream`` frames follow one request attempt (seed 003)::

    {"kind":"start","attemptId","turn","step","startedAfterSeq"}
    {"kind":"chunk","attemptId","index","time","chunk":<StreamChunk>}
    {"kind":"end","attemptId","outcome":{"kind":"committed","eventType","seq"}|{"kind":"abandoned"}}

``chunk`` carries one normalized model chunk (:data:`WireChunk`, the wire form of
``models.base.StreamChunk``). ``tool-runtime`` frames follow one tool call through stage 03
(``{callId, name, phase, status, detail?, time}``; see ``tools/runtime.py`` for the phases).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from .base import Frozen
from .events import Usage
from .messages import AssistantBlock

BlockType = Literal["text", "reasoning", "tool-call"]
FinishReason = Literal["stop", "tool-calls", "max-tokens"]
Phase = Literal["prepare", "policy", "approval", "execute", "progress", "result"]
RuntimeStatus = Literal["start", "done", "waiting", "allow", "deny", "error"]
"""The status of one tool-runtime phase (``prepare`` start → done, ``approval`` waiting → allow…)."""


# --- model chunks ------------------------------------------------------------------------------


class BlockStartChunk(Frozen):
    type: Literal["block-start"] = "block-start"
    index: int
    block_type: BlockType
    id: str | None = None
    name: str | None = None


class TextDeltaChunk(Frozen):
    type: Literal["text-delta"] = "text-delta"
    index: int
    text: str


class ReasoningDeltaChunk(Frozen):
    type: Literal["reasoning-delta"] = "reasoning-delta"
    index: int
    text: str


class ToolCallDeltaChunk(Frozen):
    type: Literal["tool-call-delta"] = "tool-call-delta"
    index: int
    id: str
    arguments_delta: str
    name: str | None = None


class BlockEndChunk(Frozen):
    type: Literal["block-end"] = "block-end"
    index: int
    block: AssistantBlock


class UsageReport(Frozen):
    type: Literal["usage"] = "usage"
    usage: Usage


class FinishChunk(Frozen):
    type: Literal["finish"] = "finish"
    reason: FinishReason
    provider_state: dict[str, JsonValue] | None = None


WireChunk = Annotated[
    BlockStartChunk
    | TextDeltaChunk
    | ReasoningDeltaChunk
    | ToolCallDeltaChunk
    | BlockEndChunk
    | UsageReport
    | FinishChunk,
    Field(discriminator="type"),
]
"""One normalized model chunk as sent in an ``assistant-stream`` chunk frame."""


# --- assistant-stream frames -------------------------------------------------------------------


class StreamStart(Frozen):
    kind: Literal["start"] = "start"
    attempt_id: str
    turn: int
    step: int
    started_after_seq: int


class StreamChunkFrame(Frozen):
    kind: Literal["chunk"] = "chunk"
    attempt_id: str
    index: int
    time: int
    chunk: WireChunk


class Committed(Frozen):
    kind: Literal["committed"] = "committed"
    event_type: str
    seq: int


class Abandoned(Frozen):
    kind: Literal["abandoned"] = "abandoned"


class StreamEnd(Frozen):
    kind: Literal["end"] = "end"
    attempt_id: str
    outcome: Annotated[Committed | Abandoned, Field(discriminator="kind")]


AssistantStreamFrame = Annotated[StreamStart | StreamChunkFrame | StreamEnd, Field(discriminator="kind")]


# --- tool-runtime frames -----------------------------------------------------------------------


class ToolRuntimeFrame(Frozen):
    """One phase of one tool call in the runtime (stage 03)."""

    call_id: str
    name: str
    phase: Phase
    status: RuntimeStatus
    detail: str | None = None
    time: int
