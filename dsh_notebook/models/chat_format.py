"""Our messages → OpenAI Chat Completions messages (the wire form of a request's history).

::

    user       {"role": "user", "content": "..."}
    system     {"role": "system", "content": "..."}
    assistant  {"role": "assistant", "content": "..." or "",
                "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}
    tool       {"role": "tool", "tool_call_id": "...", "content": "..."}

Text content is the concatenation of a message's text blocks (the ``.text`` of our messages).
``content`` is ``""``, never ``null``, on assistant messages (some OpenAI-compatible servers
refuse ``null``); ``tool_calls`` appears only when there are calls. Reasoning blocks are left out
unless ``include_reasoning`` (then ``reasoning_content``, DeepSeek's field). A tool message has no
error flag on this wire: its text says so.

Conversion is cached per message object (messages are frozen), so converting a long history
again for the next request costs one dictionary lookup per message. The returned dicts are shared
between calls: treat them as read-only.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any, Literal, NotRequired, TypedDict

from ..wire.messages import (
    AnyMessage,
    AssistantMessage,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolMessage,
    UserMessage,
)

__all__ = ["ChatMessage", "ChatToolCall", "to_openai_message", "to_openai_messages"]


class ChatFunction(TypedDict):
    name: str
    arguments: str


class ChatToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: ChatFunction


class ChatMessage(TypedDict):
    """One message in Chat Completions form, as this package sends it (see the module doc)."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_call_id: NotRequired[str]
    tool_calls: NotRequired[list[ChatToolCall]]
    reasoning_content: NotRequired[str]


_Cache = dict[int, tuple["weakref.ref[Any]", ChatMessage]]
_caches: tuple[_Cache, _Cache] = ({}, {})  # without / with reasoning


def _text(blocks: Iterable[object]) -> str:
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


def _convert(message: AnyMessage, include_reasoning: bool) -> ChatMessage:
    if isinstance(message, UserMessage):
        return {"role": "user", "content": _text(message.content)}
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": _text(message.content)}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": _text(message.content),
        }
    if isinstance(message, AssistantMessage):
        out: ChatMessage = {"role": "assistant", "content": _text(message.content)}
        calls: list[ChatToolCall] = [
            {
                "id": b.id,
                "type": "function",
                "function": {"name": b.name, "arguments": b.arguments},
            }
            for b in message.content
            if isinstance(b, ToolCallBlock)
        ]
        if calls:
            out["tool_calls"] = calls
        if include_reasoning:
            reasoning = "".join(b.text for b in message.content if isinstance(b, ReasoningBlock))
            if reasoning:
                out["reasoning_content"] = reasoning
        return out
    raise TypeError(f"not a message: {type(message).__name__}")


def to_openai_message(message: AnyMessage, *, include_reasoning: bool = False) -> ChatMessage:
    """One message in OpenAI Chat Completions form (cached per message object; read-only)."""
    cache = _caches[include_reasoning]
    key = id(message)
    hit = cache.get(key)
    if hit is not None and hit[0]() is message:
        return hit[1]
    converted = _convert(message, include_reasoning)
    try:
        ref = weakref.ref(message, lambda _r, k=key, c=cache: c.pop(k, None))  # type: ignore[misc]
    except TypeError:  # not weak-referenceable: do not cache
        return converted
    cache[key] = (ref, converted)
    return converted


def to_openai_messages(
    messages: Iterable[AnyMessage], *, include_reasoning: bool = False
) -> list[ChatMessage]:
    """The messages of a request in OpenAI Chat Completions form (see the module doc)."""
    return [to_openai_message(m, include_reasoning=include_reasoning) for m in messages]
