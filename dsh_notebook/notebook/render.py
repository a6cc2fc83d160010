"""The cell's live view of a turn: a small fold of follow items into text and tool segments.

:class:`TurnView` folds ``session/follow`` items (assistant-stream chunks, tool-runtime frames and
durable events) into an ordered list of segments — streamed answer text, one line per tool call
(name, arguments, phase, result summary or error) and notices (approval, retry, abort). A *sink*
shows them (:mod:`.sinks`): in a kernel a display updated in place (Markdown + plain text); in a
terminal an append-only stream on stdout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..client.summary import summarize_result
from ..wire.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    LlmRetry,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from .result import parse_event

__all__ = ["format_arguments", "summarize_result"]


@dataclass
class TextSeg:
    attempt: str | None
    text: str = ""
    abandoned: bool = False


@dataclass
class ToolSeg:
    call_id: str
    name: str
    arguments: str = ""
    phase: str = "prepare"
    status: str = "start"
    detail: str | None = None
    result: str | None = None
    error: str | None = None
    done: bool = False

    def args_line(self) -> str:
        return format_arguments(self.arguments)

    def state_line(self) -> str:
        if self.done:
            return f"✗ {self.error}" if self.error else f"✓ {self.result or ''}".rstrip()
        if self.phase == "approval" and self.status == "waiting":
            return "? waiting for approval"
        if self.phase == "approval" and self.status == "deny":
            return "✗ denied"
        if self.phase in ("execute", "progress"):
            return f"… running{': ' + self.detail if self.detail else ''}"
        return "…"


@dataclass
class NoteSeg:
    text: str


Segment = TextSeg | ToolSeg | NoteSeg


class Sink(Protocol):
    def text(self, seg: TextSeg, delta: str) -> None: ...
    def tool(self, seg: ToolSeg, new: bool) -> None: ...
    def note(self, seg: NoteSeg) -> None: ...
    def retract(self, seg: TextSeg) -> None: ...
    def tick(self) -> None: ...
    def flush(self) -> None: ...


def format_arguments(arguments: str, *, width: int = 100) -> str:
    """``{"command": "ls"}`` → ``ls``; several keys → ``k=v, …``; truncated, one line."""
    try:
        data = json.loads(arguments) if arguments else {}
    except ValueError:
        data = None
    if isinstance(data, dict) and len(data) == 1:
        text = str(next(iter(data.values())))
    elif isinstance(data, dict):
        text = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in data.items())
    else:
        text = arguments
    text = text.replace("\r", "").replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass
class TurnView:
    """The fold. ``feed`` returns whether anything visible changed."""

    sink: Sink | None = None
    segments: list[Segment] = field(default_factory=list)
    _texts: dict[str | None, TextSeg] = field(default_factory=dict)
    _tools: dict[str, ToolSeg] = field(default_factory=dict)
    _since_message: str = ""  # text streamed since the last committed assistant message

    def feed(self, item: dict[str, Any], events: list[AnyEvent] | None = None) -> bool:
        kind = item.get("type")
        if kind == "assistant-stream":
            return self._stream(item.get("frame") or {})
        if kind == "tool-runtime":
            return self._runtime(item.get("frame") or {})
        if kind == "event":
            parsed = events if events is not None else [parse_event(item["event"])]
            changed = False
            for event in parsed:
                changed = self.event(event) or changed
            return changed
        return False

    def _stream(self, frame: dict[str, Any]) -> bool:
        attempt = frame.get("attemptId")
        if frame.get("kind") == "chunk":
            chunk = frame.get("chunk") or {}
            if chunk.get("type") == "text-delta" and chunk.get("text"):
                self._add_text(attempt, chunk["text"])
                return True
        elif frame.get("kind") == "end":
            outcome = frame.get("outcome") or {}
            seg = self._texts.get(attempt)
            if outcome.get("kind") == "abandoned" and seg is not None and not seg.abandoned:
                seg.abandoned = True
                self._since_message = ""
                if self.sink:
                    self.sink.retract(seg)
                return True
        return False

    def _add_text(self, attempt: str | None, delta: str) -> None:
        seg = self._texts.get(attempt)
        if seg is None or seg.abandoned or self.segments[-1] is not seg:
            seg = TextSeg(attempt)
            self._texts[attempt] = seg
            self.segments.append(seg)
        seg.text += delta
        self._since_message += delta
        if self.sink:
            self.sink.text(seg, delta)

    def _tool_seg(self, call_id: str, name: str) -> tuple[ToolSeg, bool]:
        seg = self._tools.get(call_id)
        if seg is not None:
            return seg, False
        seg = ToolSeg(call_id, name)
        self._tools[call_id] = seg
        self.segments.append(seg)
        return seg, True

    def _runtime(self, frame: dict[str, Any]) -> bool:
        call_id = frame.get("callId")
        if not call_id:
            return False
        seg, new = self._tool_seg(call_id, str(frame.get("name") or "?"))
        seg.phase, seg.status = str(frame.get("phase")), str(frame.get("status"))
        if frame.get("detail"):
            seg.detail = str(frame["detail"])[:120]
        if self.sink and (new or seg.phase in ("approval", "execute") or seg.phase == "progress"):
            self.sink.tool(seg, new)
        return True

    def event(self, event: AnyEvent) -> bool:
        if isinstance(event, ToolCall):
            seg, new = self._tool_seg(event.call_id, event.name)
            seg.arguments = event.arguments
            if self.sink:
                self.sink.tool(seg, new)
            return True
        if isinstance(event, ToolResult):
            seg, new = self._tool_seg(event.message.tool_call_id, event.error.name if event.error else "?")
            seg.done = True
            text = event.message.text
            if event.message.is_error or event.error:
                code = event.error.code if event.error else "ERROR"
                seg.error = f"{code}: {summarize_result(text)}"
            else:
                seg.result = summarize_result(text)
            if self.sink:
                self.sink.tool(seg, new)
            return True
        if isinstance(event, AssistantMessageEvent):
            missing = event.message.text
            if missing.startswith(self._since_message):
                missing = missing[len(self._since_message):]
            if missing:  # joined late or the adapter did not stream: show the committed text
                self._add_text(f"seq{event.seq}", missing)
            self._since_message = ""
            return bool(missing)
        note = _note_for(event)
        if note is None:
            return False
        self.add_note(note)
        return True

    def add_note(self, text: str) -> None:
        seg = NoteSeg(text)
        self.segments.append(seg)
        if self.sink:
            self.sink.note(seg)


def _note_for(event: AnyEvent) -> str | None:
    if isinstance(event, ApprovalAsked):
        return None  # shown on the tool line (tool-runtime approval frame)
    if isinstance(event, ApprovalDecided) and event.decision != "allow":
        return f"{event.name}: {event.decision}" + (f" by {event.by}" if event.by else "")
    if isinstance(event, LlmRetry):
        return f"model error [{event.error.code}] {event.error.message}; retry {event.attempt} in {event.delay_ms} ms"
    if isinstance(event, AssistantAttempt) and event.error is not None:
        return f"model attempt failed: [{event.error.code}] {event.error.message}"
    if isinstance(event, TurnEnd) and event.reason.kind not in ("completed", "error"):  # errors: raised
        reason = event.reason
        extra = f" ({reason.cause})" if reason.cause else ""
        if reason.error:
            extra += f": [{reason.error.code}] {reason.error.message}"
        return f"turn {event.turn} ended {reason.kind}{extra}"
    return None
