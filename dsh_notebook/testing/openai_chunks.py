"""Scripted replies for :mod:`dsh_notebook.testing.openai_server`: chunk builders, quirks and faults.

A :class:`Reply` is either a stream (``chunks``: chat-completion chunk dicts, each sent as one SSE
``data:`` event) or an error (``status`` ≠ 200 with an OpenAI-style ``error`` body). Stream faults:
``cut_after`` (close the socket after N pieces), ``stall_after`` (stop sending for
``stall_seconds``), ``done=False`` (no ``[DONE]``), ``split_every`` / ``split_at`` (write the SSE
bytes in pieces, each its own TCP write — also inside multi-byte UTF-8 characters), ``gap``
(seconds between pieces), ``head_delay`` (seconds before the response headers: the time to
first byte), ``first_delay`` (seconds after the headers before the first chunk), ``raw`` (send these SSE bytes verbatim), ``error_event`` (an
``{"error": ...}`` event mid-stream), ``hold`` (a :class:`threading.Event`: no byte of the response
until the test sets it, from any thread — a first byte held as long as a test needs, no clock).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

Json = dict[str, JsonValue]
"""A JSON object: a chunk, a delta, a usage or an error body."""

USAGE: Json = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17,
         "prompt_tokens_details": {"cached_tokens": 2}}


@dataclass
class Reply:
    chunks: list[Json] = field(default_factory=list)
    status: int = 200
    error: Json | None = None
    headers: dict[str, str] = field(default_factory=dict)
    done: bool = True
    cut_after: int | None = None
    stall_after: int | None = None
    stall_seconds: float = 30.0
    split_every: int | None = None
    split_at: tuple[int, ...] = ()
    gap: float = 0.0
    head_delay: float = 0.0
    first_delay: float = 0.0
    raw: bytes | None = None
    error_event: Json | None = None
    hang_up: bool = False  # close the connection before any byte (a kept-alive connection the server dropped)
    hold: threading.Event | None = None  # no byte of the response until it is set

    def body(self, model: str = "fake-model") -> bytes:
        """The whole SSE body, as the server sends it (defaults filled into each chunk)."""
        if self.raw is not None:
            return self.raw
        return b"".join(self.events(model))

    def events(self, model: str = "fake-model") -> list[bytes]:
        out = []
        for item in self.chunks:
            full = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
                    "model": model, **item}
            out.append(b"data: " + json.dumps(full, ensure_ascii=False).encode() + b"\n\n")
        if self.error_event is not None:
            out.append(b"data: " + json.dumps({"error": self.error_event}).encode() + b"\n\n")
        if self.done and self.raw is None:
            out.append(b"data: [DONE]\n\n")
        return out

    def pieces(self, model: str = "fake-model") -> list[bytes]:
        """What the server writes, one TCP write (and one HTTP chunk) each."""
        if self.raw is None and not self.split_every and not self.split_at:
            return self.events(model)
        body = self.body(model)
        cuts = set(self.split_at)
        if self.split_every:
            cuts.update(range(self.split_every, len(body), self.split_every))
        edges = [0, *sorted(c for c in cuts if 0 < c < len(body)), len(body)]
        return [body[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


def multibyte_split_points(body: bytes) -> tuple[int, ...]:
    """Offsets that fall inside multi-byte UTF-8 characters (one per character)."""
    return tuple(i for i in range(1, len(body)) if 0x80 <= body[i] < 0xC0 and body[i - 1] >= 0xC0)


def split_text(text: str, pieces: int) -> list[str]:
    """``text`` in ``pieces`` nearly equal parts (no empty parts)."""
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // pieces))
    return [text[i:i + size] for i in range(0, len(text), size)]


def chunk(delta: Json | None = None, *, finish: str | None = None,
          usage: Json | None = None, index: int = 0) -> Json:
    """One chat-completion chunk with a single choice (``delta=None`` and ``usage``: no choices)."""
    if delta is None and usage is not None:
        return {"choices": [], "usage": usage}
    out: Json = {"choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}]}
    if usage is not None:
        out["usage"] = usage
    return out


def _tail(finish: str | None, usage: Json | None) -> list[Json]:
    out = [chunk({}, finish=finish)] if finish is not None else []
    if usage is not None:
        out.append(chunk(usage=usage))
    return out


def text_chunks(text: str, *, pieces: int = 3, finish: str | None = "stop",
                usage: Json | None = USAGE) -> list[Json]:
    head = [chunk({"role": "assistant", "content": ""})]
    body = [chunk({"content": part}) for part in split_text(text, pieces)] if text else []
    return head + body + _tail(finish, usage)


def reasoning_chunks(reasoning: str, text: str = "", *, pieces: int = 3, field_name: str = "reasoning_content",
                     finish: str | None = "stop", usage: Json | None = USAGE) -> list[Json]:
    head = [chunk({"role": "assistant", "content": None, field_name: ""})]
    body = [chunk({field_name: part, "content": None}) for part in split_text(reasoning, pieces)]
    body += [chunk({"content": part}) for part in split_text(text, pieces)] if text else []
    return head + body + _tail(finish, usage)


def tool_call_chunks(calls: Sequence[tuple[str, str, str]], *, text: str = "", reasoning: str = "",
                     pieces: int = 3, quirks: Sequence[str] = (), finish: str | None = "tool_calls",
                     usage: Json | None = USAGE) -> list[Json]:
    """A reply with tool calls ``(id, name, arguments)``.

    ``quirks``: ``repeat-ids`` (id, type and name in every delta), ``index-zero`` (all calls at
    index 0), ``no-index`` (no index field), ``finish-stop`` (finish_reason "stop"), ``no-finish``.
    """
    out = [chunk({"role": "assistant", "content": ""})]
    if reasoning:
        out += [chunk({"reasoning_content": p}) for p in split_text(reasoning, pieces)]
    if text:
        out += [chunk({"content": p}) for p in split_text(text, pieces)]
    for position, (call_id, name, arguments) in enumerate(calls):
        parts = split_text(arguments, pieces) if arguments else [""]
        for n, part in enumerate(parts):
            function: Json = {"arguments": part}
            call: Json = {"function": function}
            if "no-index" not in quirks:
                call["index"] = 0 if "index-zero" in quirks else position
            if n == 0 or "repeat-ids" in quirks:
                call.update(id=call_id, type="function")
                function["name"] = name
            out.append(chunk({"tool_calls": [call]}))
    if "finish-stop" in quirks:
        finish = "stop"
    if "no-finish" in quirks:
        finish = None
    return out + _tail(finish, usage)


def text_reply(text: str, **options: Any) -> Reply:
    keys = {"pieces", "finish", "usage"}
    return Reply(text_chunks(text, **{k: v for k, v in options.items() if k in keys}),
                 **{k: v for k, v in options.items() if k not in keys})


def tool_call_reply(calls: Sequence[tuple[str, str, str]], **options: Any) -> Reply:
    keys = {"text", "reasoning", "pieces", "quirks", "finish", "usage"}
    return Reply(tool_call_chunks(calls, **{k: v for k, v in options.items() if k in keys}),
                 **{k: v for k, v in options.items() if k not in keys})


def error_reply(status: int, message: str, *, code: str | None = None, type: str | None = None,
                headers: dict[str, str] | None = None) -> Reply:
    kind = type or ("invalid_request_error" if status < 500 else "server_error")
    if status == 429 and type is None:
        kind = "rate_limit_exceeded"
    return Reply(status=status, error={"message": message, "type": kind, "param": None, "code": code},
                 headers=headers or {})
