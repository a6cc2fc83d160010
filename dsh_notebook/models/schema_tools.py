"""Tool calls from schema-constrained output, for models whose chat template has no tool calling.

A small local model (SmolLM2-135M) gets no usable ``tool_calls`` from llama.cpp's own templates,
but writes valid JSON under a JSON-schema grammar every time. So, when tools are offered, the
request carries no ``tools``; instead:

- a system message lists the tools (name, description, parameters) and the answer's two shapes;
- ``response_format`` is a JSON schema: one of ``{"name": <const>, "arguments": <the tool's
  parameters>}`` per tool, or ``{"content": <string>}`` for a text answer;
- the history is written in the same terms: an assistant tool call becomes its JSON, a tool
  result a user message ``Result of NAME (call ID): …`` (such templates know no ``tool`` role).

:class:`SchemaAnswer` turns the streamed JSON back into ordinary chunks: a tool call
(``BlockStart`` / ``ToolCallDelta`` / ``BlockEnd`` + ``Finish("tool-calls")``) or a text answer,
streamed word by word as it arrives (a cut one keeps its words). An answer that is not the JSON
asked for is kept as text.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from ..wire.events import ToolSchema
from ..wire.messages import TextBlock, ToolCallBlock
from .base import BlockEnd, BlockStart, Finish, FinishReason, StreamChunk, TextDelta, ToolCallDelta
from .chat_format import ChatMessage

_GUIDE = (
    "You can call one of these tools. Answer with JSON only: either "
    '{{"name": TOOL, "arguments": {{...}}}} to call a tool, or {{"content": "your answer"}} to answer '
    "in words. Call a tool only when it is needed.\nTools:\n{tools}"
)


_EXAMPLE: list[ChatMessage] = [{"role": "user", "content": "Say hi."}, {"role": "assistant", "content": '{"content": "Hi there!"}'}]


def answer_schema(tools: Sequence[ToolSchema], *, text: bool = True) -> dict[str, JsonValue]:
    """The JSON schema of one answer: a call of one of ``tools`` or (``text``) a text answer."""
    shapes: list[JsonValue] = [
        {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"],
         "additionalProperties": False}
    ] if text else []
    for tool in tools:
        params: dict[str, JsonValue] = tool.parameters or {"type": "object"}
        shapes.append({"type": "object", "properties": {"name": {"const": tool.name}, "arguments": params},
                       "required": ["name", "arguments"], "additionalProperties": False})
    return {"oneOf": shapes}


def guide_message(tools: Sequence[ToolSchema]) -> ChatMessage:
    lines = [f"- {t.name}: {t.description.splitlines()[0] if t.description else ''} "
             f"arguments: {json.dumps(t.parameters, separators=(',', ':'))}" for t in tools]
    return {"role": "system", "content": _GUIDE.format(tools="\n".join(lines))}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def rewrite_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """OpenAI messages with ``tool_calls`` / ``tool`` roles → plain roles, calls as their JSON."""
    names: dict[str, str] = {}
    out: list[ChatMessage] = []
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            parts = [_text(msg.get("content"))] if _text(msg.get("content")) else []
            for call in msg["tool_calls"]:
                fn = call.get("function") or {}
                names[str(call.get("id"))] = str(fn.get("name"))
                try:
                    arguments = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    arguments = fn.get("arguments")
                parts.append(json.dumps({"name": fn.get("name"), "arguments": arguments}))
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            call_id = str(msg.get("tool_call_id"))
            out.append({"role": "user", "content": f"Result of {names.get(call_id, 'the tool')} (call {call_id}):\n"
                                                   f"{_text(msg.get('content'))}"})
        else:
            out.append({"role": msg["role"], "content": msg["content"]})
    return out


def schema_params(params: dict[str, Any], tools: Sequence[ToolSchema]) -> dict[str, Any]:
    """``chat.completions.create`` arguments for schema-constrained tool calling."""
    out = {k: v for k, v in params.items() if k not in ("tools", "tool_choice", "parallel_tool_calls")}
    messages = rewrite_messages(list(params["messages"]))
    guide = guide_message(tools)
    if messages and messages[0].get("role") == "system":
        messages[0] = {"role": "system", "content": f"{_text(messages[0].get('content'))}\n\n{guide['content']}"}
    else:
        messages.insert(0, guide)
    messages[1:1] = _EXAMPLE  # one worked example: a plain question gets a plain answer
    out["messages"] = messages
    choice = params.get("tool_choice")  # "required" or one named function: no text answer (the grammar says so)
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    offered = ([t for t in tools if t.name == named] or list(tools)) if named else list(tools)
    schema = answer_schema(offered, text=choice not in ("required",) and named is None)
    out["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    return out


_CONTENT = re.compile(r'\s*\{\s*"content"\s*:\s*"')


def _string_end(raw: str, pos: int) -> tuple[int, bool]:
    """How far the JSON string body from ``pos`` can be decoded now (never inside an escape), and
    whether its closing quote was reached there."""
    i = pos
    while i < len(raw):
        c = raw[i]
        if c == '"':
            return i, True
        if c != "\\":
            i += 1
            continue
        step = 2
        if raw[i + 1:i + 2] == "u":
            step = 6
            try:
                if 0xD800 <= int(raw[i + 2:i + 6], 16) < 0xDC00:
                    step = 12  # a surrogate pair comes whole
            except ValueError:
                pass
        if i + step > len(raw):
            break
        i += step
    return i, False


def _decode(body: str) -> str:
    try:
        return str(json.loads(f'"{body}"', strict=False))
    except ValueError:
        return body


class SchemaAnswer:
    """Turns a schema-constrained answer back into ordinary chunks. A text answer
    (``{"content": "…"}``) streams as it arrives, its string decoded piece by piece, so a slow
    model's words show at once and a cut one keeps its words (not its JSON); a tool call is held
    until the JSON is whole."""

    def __init__(self, tool_names: Sequence[str]) -> None:
        self.names = frozenset(tool_names)
        self.parts: list[str] = []
        self._raw = ""
        self._pos: int | None = None  # where the content string's undecoded rest starts (a text answer)
        self._closed = False
        self._text = ""

    def feed(self, chunk: StreamChunk) -> list[StreamChunk]:
        """Stream a text answer's words; keep a call's text; pass usage through; hold the rest."""
        if isinstance(chunk, TextDelta):
            self.parts.append(chunk.text)
            self._raw += chunk.text
            return self._stream()
        if isinstance(chunk, (BlockStart, BlockEnd, Finish)):
            return []
        return [chunk]

    def _stream(self) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        if self._pos is None:
            match = _CONTENT.match(self._raw)
            if match is None:
                return []
            self._pos = match.end()
            out.append(BlockStart(0, "text"))
        if not self._closed:
            end, self._closed = _string_end(self._raw, self._pos)
            piece = _decode(self._raw[self._pos:end])
            self._pos = end
            if piece:
                self._text += piece
                out.append(TextDelta(0, piece))
        return out

    def finish(self, reason: FinishReason) -> list[StreamChunk]:
        raw = "".join(self.parts)
        try:  # whole JSON cut only in its trailing whitespace (the grammar allows it) is a whole answer
            value = json.loads(raw)
        except ValueError:
            value = None
        finish = Finish("max-tokens" if reason == "max-tokens" and value is None else "stop")
        if self._pos is not None:  # a text answer, streamed: its words, whole or as far as they came
            text = value["content"] if isinstance(value, dict) and isinstance(value.get("content"), str) else self._text
            rest = text[len(self._text):] if text.startswith(self._text) else ""
            return [*([TextDelta(0, rest)] if rest else []), BlockEnd(0, TextBlock(text=self._text + rest)), finish]
        if isinstance(value, dict) and value.get("name") in self.names and isinstance(value.get("arguments"), dict):
            call_id = f"call_{uuid.uuid4().hex[:12]}"
            name, arguments = str(value["name"]), json.dumps(value["arguments"])
            return [BlockStart(0, "tool-call", id=call_id, name=name),
                    ToolCallDelta(0, call_id, arguments, name=name),
                    BlockEnd(0, ToolCallBlock(id=call_id, name=name, arguments=arguments)),
                    Finish("tool-calls")]
        out: list[StreamChunk] = []
        if raw:
            out += [BlockStart(0, "text"), TextDelta(0, raw), BlockEnd(0, TextBlock(text=raw))]
        return [*out, finish]
