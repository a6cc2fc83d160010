"""The value of a ``%dsh`` cell (:class:`TurnResult`) and the fold that finds it in a follow stream.

:class:`TurnTracker` reads ``session/follow`` items (wire dicts) and recognises *this* prompt's
turn: the ``user/message`` whose source carries our ``requestId`` names the turn (queued prompts
wait for an earlier turn; a steered prompt joins the running one); the ``turn/end`` of that turn
finishes it. The result holds the typed events from that turn's start to its end.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from ..wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    EventAdapter,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    Usage,
    UserMessageEvent,
)


@dataclass(frozen=True)
class TurnResult:
    """What one ``%dsh`` prompt produced: the final text, where, how it ended, and its events."""

    text: str
    session_id: str
    turn: int
    reason: TurnEndReason
    events: tuple[AnyEvent, ...] = ()
    request_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason.kind == "completed"

    @property
    def tool_calls(self) -> list[tuple[ToolCall, ToolResult | None]]:
        results = {e.message.tool_call_id: e for e in self.events if isinstance(e, ToolResult)}
        return [(e, results.get(e.call_id)) for e in self.events if isinstance(e, ToolCall)]

    @property
    def usage(self) -> Usage:
        total_in = total_out = 0
        for event in self.events:
            if isinstance(event, AssistantMessageEvent) and event.usage:
                total_in += event.usage.input_tokens
                total_out += event.usage.output_tokens
        return Usage(input_tokens=total_in, output_tokens=total_out)

    def summary(self) -> str:
        """One line: how the turn ended, where, how many tool calls, how much text."""
        reason: str = self.reason.kind
        if self.reason.cause:
            reason += f" ({self.reason.cause})"
        if self.reason.error:
            reason += f": [{self.reason.error.code}] {self.reason.error.message}"
        calls = len(self.tool_calls)
        return (f"{reason} · session {self.session_id} · turn {self.turn} · "
                f"{calls} tool call{'s' if calls != 1 else ''} · {len(self.events)} events")

    def __repr__(self) -> str:
        return f"<TurnResult {self.summary()} · {len(self.text)} chars>"

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> str:
        mark = "✓" if self.ok else "⚠"
        return f"{mark} *{self.summary()}*"

    def _repr_html_(self) -> str:
        mark = "✓" if self.ok else "⚠"
        color = "#2e7d32" if self.ok else "#b26a00"
        rows = "".join(
            f"<li><code>{html.escape(call.name)}</code> "
            f"{'error ' + html.escape(res.error.code) if res and res.error else ('ok' if res else 'no result')}</li>"
            for call, res in self.tool_calls
        )
        calls = f"<ul style='margin:2px 0'>{rows}</ul>" if rows else ""
        text = html.escape(self.text) or "<i>(no text)</i>"
        return (
            f"<div class='dsh-turn-result' style='font-size:90%;color:{color}'>{mark} "
            f"{html.escape(self.summary())}</div>"
            f"<details style='font-size:90%'><summary>final text, tool calls</summary>"
            f"<pre style='white-space:pre-wrap'>{text}</pre>{calls}</details>"
        )


def parse_event(data: dict[str, Any] | AnyEvent) -> AnyEvent:
    if isinstance(data, dict):
        return EventAdapter.validate_python(data)  # type: ignore[no-any-return]
    return data


@dataclass
class TurnTracker:
    """Folds follow items until the turn that answers ``request_id`` ends."""

    session_id: str
    request_id: str
    turn: int | None = None
    events: list[AnyEvent] = field(default_factory=list)
    end: TurnEnd | None = None
    started: bool = False  # our user message has been seen
    start_seq: int = -1  # its seq
    _current_turn: int | None = None

    @property
    def done(self) -> bool:
        return self.end is not None

    def feed(self, item: dict[str, Any]) -> list[AnyEvent]:
        """Take one follow item; return the durable events it carried (typed)."""
        kind = item.get("type")
        raw: list[Any] = []
        if kind == "snapshot":
            raw = list(item.get("events") or [])
        elif kind == "event":
            raw = [item.get("event")]
        out = [parse_event(e) for e in raw if e is not None]
        for event in out:
            self._take(event)
        return out

    def _take(self, event: AnyEvent) -> None:
        if self.end is not None:
            return
        self.events.append(event)
        if isinstance(event, TurnStart):
            self._current_turn = event.turn
        elif isinstance(event, UserMessageEvent) and not self.started:
            source = event.message.source
            if source.request_id == self.request_id:
                self.started = True
                self.start_seq = event.seq
                self.turn = event.turn if event.turn is not None else self._current_turn
        elif isinstance(event, TurnEnd) and self.started and event.turn == self.turn:
            self.end = event

    def result(self) -> TurnResult:
        if self.end is None or self.turn is None:
            raise RuntimeError("the turn has not ended")
        start = next((i for i, e in enumerate(self.events)
                      if isinstance(e, TurnStart) and e.turn == self.turn), None)
        if start is None:
            start = next(i for i, e in enumerate(self.events) if isinstance(e, UserMessageEvent)
                         and e.message.source.request_id == self.request_id)
        events = tuple(self.events[start:])
        return TurnResult(
            text=final_text(events),
            session_id=self.session_id,
            turn=self.turn,
            reason=self.end.reason,
            events=events,
            request_id=self.request_id,
        )


def final_text(events: tuple[AnyEvent, ...] | list[AnyEvent]) -> str:
    """The text of the last assistant message that has any."""
    for event in reversed(events):
        if isinstance(event, AssistantMessageEvent) and event.message.text:
            return event.message.text
    return ""
