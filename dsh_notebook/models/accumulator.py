"""A sans-IO accumulator: OpenAI chat-completion stream chunks → our :data:`StreamChunk`s.

:class:`ChunkAccumulator` is fed one chunk at a time — a plain ``dict`` (the JSON of one SSE
``data:`` line) or an SDK object with the same attributes — and returns the normalized chunks that
chunk produced. :meth:`ChunkAccumulator.finish` closes the stream: one ``BlockEnd`` per block (in
index order, carrying the finished block), the last usage seen, and ``Finish``.

Quirks tolerated (servers differ; all seen in the wild):

- tool-call ids or names repeated in every delta (a repeated id continues its call, a repeated
  name is not appended);
- parallel calls all at provider index 0, told apart by their ids;
- tool calls that end with ``finish_reason`` ``"stop"``, or with no finish reason but ``[DONE]``;
- usage in a final chunk whose ``choices`` is empty (``stream_options.include_usage``);
- arguments split anywhere (they arrive as ``str``; byte splits are the SSE decoder's business);
- ``reasoning_content`` (DeepSeek) or ``reasoning`` (OpenRouter, vLLM) deltas → reasoning blocks;
- a call without any id (some local servers) gets ``call_<n>``.

Block indexes are our own: dense, in order of first appearance. On ``finish_reason`` ``"length"``
tool-call blocks are dropped (their arguments are cut), as upstream's ``BlockAssembler`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ErrorCode, ModelError
from ..wire.events import Usage
from ..wire.messages import AssistantBlock
from .base import (
    BlockEnd,
    BlockParts,
    BlockStart,
    BlockType,
    Finish,
    FinishReason,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)


class _Attrs:
    """A read-only ``.get`` view of a plain object's attributes."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self.obj, key, default)


_EMPTY: dict[str, Any] = {}


def _fields(obj: Any) -> Mapping[str, Any] | _Attrs:
    """The fields of a chunk part as something with ``.get``: a dict as is; an SDK (pydantic)
    object's ``__dict__`` plus its extras (``reasoning_content`` is an extra) — read directly,
    since a missing attribute costs a slow ``__getattr__`` miss; any other object by attribute."""
    if type(obj) is dict:
        return obj
    if obj is None:
        return _EMPTY
    try:
        extra = obj.__pydantic_extra__
    except AttributeError:
        return obj if isinstance(obj, Mapping) else _Attrs(obj)
    return {**obj.__dict__, **extra} if extra else obj.__dict__


def _get(obj: Any, key: str) -> Any:
    return _fields(obj).get(key)


def usage_from_openai(raw: Any) -> Usage:
    """OpenAI/DeepSeek usage → our disjoint :class:`Usage` (input excludes cached input)."""
    prompt = _get(raw, "prompt_tokens") or 0
    completion = _get(raw, "completion_tokens") or 0
    cached = _get(_get(raw, "prompt_tokens_details"), "cached_tokens")
    if cached is None:
        cached = _get(raw, "prompt_cache_hit_tokens")  # DeepSeek
    reasoning = _get(_get(raw, "completion_tokens_details"), "reasoning_tokens")
    return Usage(
        input_tokens=max(0, prompt - (cached or 0)),
        output_tokens=completion,
        cache_read_tokens=cached,
        reasoning_tokens=reasoning,
    )


class StreamCutError(ModelError):
    """The connection was lost mid-stream (code ``STREAM_CUT``; ``STREAM_INCOMPLETE`` when the stream
    ended cleanly without a finish reason or ``[DONE]``; ``SERVER_ERROR`` for an error event). ``retryable`` only when no tool-call block had completed.

    ``completed_tool_calls`` are the ids of calls known finished before the cut (a later block had
    started); ``partial_blocks`` the text/reasoning blocks with content received so far.
    """

    def __init__(self, message: str, *, code: ErrorCode = "STREAM_CUT", completed_tool_calls: tuple[str, ...] = (),
                 partial_blocks: tuple[AssistantBlock, ...] = ()) -> None:
        super().__init__(message, code=code, retryable=not completed_tool_calls)
        self.completed_tool_calls = completed_tool_calls
        self.partial_blocks = partial_blocks


_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "eos": "stop", "content_filter": "stop", "tool_calls": "tool-calls",
    "function_call": "tool-calls", "length": "max-tokens", "max_tokens": "max-tokens",
}


class ChunkAccumulator:
    """Folds chat-completion chunks into normalized stream chunks. Pure: no I/O, no clock."""

    def __init__(self) -> None:
        self.blocks: list[BlockParts] = []
        self.chunks_seen = 0
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self._by_id: dict[str, BlockParts] = {}
        self._by_index: dict[int, BlockParts] = {}
        self._last_call: BlockParts | None = None

    # --- feeding ------------------------------------------------------------------------------

    def feed(self, chunk: Any) -> list[StreamChunk]:
        """One chat-completion chunk (dict or SDK object) → the stream chunks it produced."""
        self.chunks_seen += 1
        usage = _get(chunk, "usage")
        if usage:
            self.usage = usage_from_openai(usage)
        fields = _fields(chunk)
        usage = fields.get("usage")
        if usage:
            self.usage = usage_from_openai(usage)
        out: list[StreamChunk] = []
        for choice in fields.get("choices") or ():
            part = _fields(choice)
            if part.get("index"):
                continue  # n > 1 is never requested; ignore extra choices
            delta = _fields(part.get("delta"))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                block = self._run("reasoning", out)
                block.parts.append(reasoning)
                out.append(ReasoningDelta(block.index, reasoning))
            content = delta.get("content")
            if content and isinstance(content, str):
                block = self._run("text", out)
                block.parts.append(content)
                out.append(TextDelta(block.index, content))
            for call in delta.get("tool_calls") or ():
                self._tool_delta(_fields(call), out)
            reason = part.get("finish_reason")
            if reason:
                self.finish_reason = reason
        return out

    def _open(self, kind: BlockType, out: list[StreamChunk], call_id: str | None = None,
              name: str | None = None) -> BlockParts:
        block = BlockParts(kind, [], call_id, name, index=len(self.blocks))
        self.blocks.append(block)
        out.append(BlockStart(block.index, kind, call_id, name))
        return block

    def _run(self, kind: BlockType, out: list[StreamChunk]) -> BlockParts:
        """The open text/reasoning block of ``kind`` (the last block), or a new one."""
        if self.blocks and self.blocks[-1].kind == kind:
            return self.blocks[-1]
        return self._open(kind, out)

    def _tool_delta(self, call: Mapping[str, Any] | _Attrs, out: list[StreamChunk]) -> None:
        call_id = call.get("id") or None
        position = call.get("index")
        fn = _fields(call.get("function"))
        name = fn.get("name") or None
        args = fn.get("arguments") or ""
        block = self._by_id.get(call_id) if call_id else None
        if block is None and call_id is None:
            block = self._by_index.get(position) if position is not None else self._last_call
        new_name = None
        if block is None:
            call_id = call_id or f"call_{len(self.blocks)}"
            block = self._open("tool-call", out, call_id, name)
            self._by_id[call_id] = block
        elif name and block.name is None:
            block.name = new_name = name
        if position is not None:
            self._by_index[position] = block
        self._last_call = block
        if args or new_name:
            block.parts.append(args)
            out.append(ToolCallDelta(block.index, block.id or "", args, new_name))

    # --- the end --------------------------------------------------------------------------------

    @property
    def saw_content(self) -> bool:
        return bool(self.blocks) or self.finish_reason is not None

    def completed_tool_calls(self) -> tuple[str, ...]:
        """Ids of tool calls known complete mid-stream: some block started after them."""
        return tuple(b.id or "" for b in self.blocks[:-1] if b.kind == "tool-call")

    def partial_blocks(self) -> tuple[AssistantBlock, ...]:
        """What an interrupted stream leaves: text/reasoning blocks with non-blank content."""
        return tuple(
            b.assemble() for b in self.blocks if b.kind != "tool-call" and "".join(b.parts).strip()
        )

    def cut_error(self, message: str, *, code: ErrorCode = "STREAM_CUT") -> StreamCutError:
        return StreamCutError(message, code=code, completed_tool_calls=self.completed_tool_calls(),
                              partial_blocks=self.partial_blocks())

    def finish(self, *, done: bool = True) -> list[StreamChunk]:
        """Close the stream: ``BlockEnd`` per kept block, ``UsageChunk`` if any, ``Finish``.

        ``done``: the server sent its end marker (``data: [DONE]``). Raises
        ``ModelError(EMPTY_RESPONSE, retryable)`` when the server sent no block and no finish
        reason; :class:`StreamCutError` ``STREAM_INCOMPLETE`` when it sent neither a finish reason
        nor ``[DONE]`` (a stream cut at a clean boundary is an incomplete attempt, not an answer);
        and ``SERVER_ERROR`` (retryable) for DeepSeek's ``insufficient_system_resource`` finish.
        """
        if not self.saw_content:
            what = "no chunks" if self.chunks_seen == 0 else "no content and no finish reason"
            raise ModelError(
                f"the model server ended the stream with {what}", code="EMPTY_RESPONSE", retryable=True
            )
        if self.finish_reason is None and not done:
            raise self.cut_error(
                f"the model server ended the stream after {self.chunks_seen} chunks with neither a "
                "finish reason nor [DONE]: the answer is incomplete",
                code="STREAM_INCOMPLETE",
            )
        raw = self.finish_reason
        if raw == "insufficient_system_resource":
            raise ModelError("the provider cut the reply short: insufficient system resources",
                             code="SERVER_ERROR", retryable=True)
        has_calls = any(b.kind == "tool-call" for b in self.blocks)
        reason: FinishReason = _FINISH.get(raw or "", "stop")
        if reason != "max-tokens":
            reason = "tool-calls" if has_calls else "stop"
        out: list[StreamChunk] = [
            BlockEnd(b.index, b.assemble())
            for b in self.blocks
            if not (reason == "max-tokens" and b.kind == "tool-call")
        ]
        if self.usage is not None:
            out.append(UsageChunk(self.usage))
        out.append(Finish(reason))
        return out
