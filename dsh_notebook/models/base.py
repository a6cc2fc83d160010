"""The model adapter protocol and its normalized stream chunks (seed 001 L7, seed 003).

An adapter turns one frozen :class:`ModelRequest` into an async stream of :data:`StreamChunk`s.
Every adapter — OpenAI-compatible, scripted, replay — yields the same chunk vocabulary, so the
agent has exactly one streaming loop. Cancellation is asyncio task cancellation. Failures are
:class:`~dsh_notebook.errors.ModelError` with a code and ``retryable``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pydantic import JsonValue

from ..wire.events import ToolSchema
from ..wire.frames import (
    BlockEndChunk,
    BlockStartChunk,
    BlockType,
    FinishChunk,
    FinishReason,
    ReasoningDeltaChunk,
    TextDeltaChunk,
    ToolCallDeltaChunk,
    UsageReport,
    WireChunk,
)
from ..wire.messages import AnyMessage, AssistantBlock, ReasoningBlock, TextBlock, ToolCallBlock

__all__ = ["BlockType", "FinishReason", "WireChunk"]


# The one chunk vocabulary is the wire's (``wire/frames.py``: frozen slotted dataclasses that are
# also the ``assistant-stream`` chunk frames' payload); these are its names on the model side.
BlockStart = BlockStartChunk
TextDelta = TextDeltaChunk
ReasoningDelta = ReasoningDeltaChunk
ToolCallDelta = ToolCallDeltaChunk
BlockEnd = BlockEndChunk
UsageChunk = UsageReport
Finish = FinishChunk

StreamChunk = BlockStart | TextDelta | ReasoningDelta | ToolCallDelta | BlockEnd | UsageChunk | Finish
"""One normalized model chunk (what an adapter yields; the wire's :data:`WireChunk` without the
discriminator annotation)."""


@dataclass(slots=True)
class BlockParts:
    """The one block assembler: one stream index's block as its deltas arrive (the provider
    adapter's accumulator and the agent's stream attempt both build blocks with it)."""

    kind: BlockType
    parts: list[str] = field(default_factory=list)
    id: str | None = None  # tool-call blocks: the call id
    name: str | None = None  # tool-call blocks: the tool name
    index: int = 0
    final: AssistantBlock | None = None  # the block a ``block-end`` chunk gave, which wins

    def assemble(self) -> AssistantBlock:
        """The block: the ``block-end`` one if given, else the deltas joined."""
        if self.final is not None:
            return self.final
        return assemble_block(self.kind, self.parts, call_id=self.id or "", name=self.name or "")

    def build(self) -> AssistantBlock | None:
        """:meth:`assemble`, or ``None`` for a tool call that never got its id or name (it
        cannot be answered)."""
        if self.final is None and self.kind == "tool-call" and (self.id is None or self.name is None):
            return None
        return self.assemble()


def assemble_block(kind: BlockType, parts: Sequence[str], *, call_id: str = "", name: str = "") -> AssistantBlock:
    """The block one stream index built: its deltas joined (a tool call's are its arguments)."""
    text = "".join(parts)
    if kind == "text":
        return TextBlock(text=text)
    if kind == "reasoning":
        return ReasoningBlock(text=text)
    return ToolCallBlock(id=call_id, name=name, arguments=text)


@dataclass(frozen=True)
class ModelRequest:
    """The frozen request of one attempt (``build_request``'s output, stage 06)."""

    provider: str
    model: str
    messages: Sequence[AnyMessage]
    tools: tuple[ToolSchema, ...] = ()
    config: dict[str, JsonValue] = field(default_factory=dict)  # max_tokens, temperature, …
    session_id: str | None = None
    turn: int = 0
    step: int = 0
    attempt: int = 1


_FIRST_BYTE: ContextVar[Callable[[], None] | None] = ContextVar("dsh_first_byte", default=None)


def mark_first_byte() -> None:
    """Called by a network adapter when the provider's first bytes (the response head) arrive;
    the running attempt records the time (``assistant/message.firstByteTime``). A no-op outside
    an attempt. In-process models never call it."""
    hook = _FIRST_BYTE.get()
    if hook is not None:
        hook()


def on_first_byte(hook: Callable[[], None] | None) -> Token[Callable[[], None] | None]:
    """Install ``hook`` for :func:`mark_first_byte` in this task's context (reset with the token)."""
    return _FIRST_BYTE.set(hook)


def reset_first_byte(token: Token[Callable[[], None] | None]) -> None:
    _FIRST_BYTE.reset(token)


@runtime_checkable
class ModelAdapter(Protocol):
    """Provider protocol ↔ normalized chunks. ``stream`` is an async generator."""

    provider: str
    base_url: str | None = None  # the OpenAI-compatible endpoint, or None (in-process models)

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]: ...

    async def aclose(self) -> None:
        """Release what the adapter holds (an HTTP client's connections); in-process: nothing."""
        return None

    async def server_window(self) -> int | None:
        """The model's context window as its server reports it (asked once per model by the
        agent), or ``None`` when the server cannot tell (then the catalog decides)."""
        return None


@runtime_checkable
class DefaultOptions(Protocol):
    """An adapter whose model has recommended request options (a local model's card sampling):
    sent unless the request's own config sets them."""

    def default_options(self) -> dict[str, JsonValue]: ...


@runtime_checkable
class HttpAdapter(Protocol):
    """An adapter that talks to a server (the OpenAI-compatible ones): its first-byte and idle
    timeouts (changeable on a live session), whether it asks the server for its window, and the
    window the server reported (cached; never asks)."""

    first_byte_timeout: float
    idle_timeout: float
    probe_window: bool

    async def server_window(self) -> int | None: ...

    def known_window(self) -> int | None: ...

