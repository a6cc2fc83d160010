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

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, JsonValue

from .base import WIRE_CONFIG, Frozen, _required_in_schema
from .events import Usage
from .messages import AssistantBlock

BlockType = Literal["text", "reasoning", "tool-call"]
FinishReason = Literal["stop", "tool-calls", "max-tokens"]
Phase = Literal["prepare", "policy", "approval", "execute", "progress", "result"]
RuntimeStatus = Literal["start", "done", "waiting", "allow", "deny", "error"]
"""The status of one tool-runtime phase (``prepare`` start → done, ``approval`` waiting → allow…)."""


# --- model chunks ------------------------------------------------------------------------------
# The one chunk vocabulary: every model adapter yields these, the agent's stream assembler reads
# them, and the ``assistant-stream`` frames carry them as they are. They are stdlib dataclasses
# (frozen, slotted: built in ~0.5 µs, against ~1–4 µs for a pydantic model, validated or
# ``model_construct``-ed), and the wire's validation and schema come from the same classes
# through ``__pydantic_config__`` (camelCase, unknown fields rejected, ``type`` required). The
# ``type`` tag is the first field (so the wire's key order) but keyword-only, so the hot path
# builds chunks positionally: ``TextDeltaChunk(0, "hi")``.

def _tag_first(schema: dict[str, Any], cls: type) -> None:
    """The schema lists ``type`` first, as the wire does (pydantic lists keyword-only fields last)."""
    props = schema.get("properties", {})
    if "type" in props:
        schema["properties"] = {"type": props["type"], **{k: v for k, v in props.items() if k != "type"}}
    _required_in_schema(schema, cls)


_CHUNK = ConfigDict(**WIRE_CONFIG, validate_by_name=True, json_schema_extra=_tag_first)


@dataclass(frozen=True, slots=True)
class BlockStartChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["block-start"] = field(default="block-start", kw_only=True)
    index: int
    block_type: BlockType
    id: str | None = None  # tool-call blocks: the call id
    name: str | None = None  # tool-call blocks: the tool name


@dataclass(frozen=True, slots=True)
class TextDeltaChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["text-delta"] = field(default="text-delta", kw_only=True)
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDeltaChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["reasoning-delta"] = field(default="reasoning-delta", kw_only=True)
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDeltaChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["tool-call-delta"] = field(default="tool-call-delta", kw_only=True)
    index: int
    id: str
    arguments_delta: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class BlockEndChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["block-end"] = field(default="block-end", kw_only=True)
    index: int
    block: AssistantBlock  # the finished block: it wins over the deltas of its index


@dataclass(frozen=True, slots=True)
class UsageReport:
    __pydantic_config__ = _CHUNK
    type: Literal["usage"] = field(default="usage", kw_only=True)
    usage: Usage


@dataclass(frozen=True, slots=True)
class FinishChunk:
    __pydantic_config__ = _CHUNK
    type: Literal["finish"] = field(default="finish", kw_only=True)
    reason: FinishReason
    provider_state: dict[str, JsonValue] | None = None  # e.g. DeepSeek reasoning to send back


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
