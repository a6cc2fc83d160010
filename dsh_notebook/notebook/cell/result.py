"""The value of a ``%dsh`` cell (:class:`TurnResult`), read from the client fold.

:func:`turn_result` asks the follow's :class:`~dsh_notebook.client.model.ClientSessionModel` how
*this* prompt's submission ended: the turn that claimed it (queued prompts wait for an earlier
turn; a steered prompt joins the running one) and that turn's ``turn/end`` — or ``aborted`` when
it was canceled before it ran. The result holds the typed events from that turn's start to its end.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...analysis.stats import TurnStats, session_stats
from ...analysis.stats_view import fmt_cost, fmt_ms, fmt_tokens
from ...client.model import ClientSessionModel
from ...client.summary import event_count, tool_outcome
from ...wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    EventAdapter,
    ToolCall,
    ToolResult,
    TurnEndReason,
    TurnStart,
    UserMessageEvent,
)
from ...wire.messages import CellRef

_MD_SPECIAL = re.compile(r"[\\`*\[\]<>!|]")  # what could open a link, an image, HTML or emphasis


@dataclass(frozen=True)
class TurnUsage:
    """A turn's token counts, the sums ``show --stats`` gives for that turn (its ``turns`` row and
    :attr:`TurnResult.stats`): ``input_tokens`` is every request's whole prompt, the cached part
    included (as providers count it); ``cached_input_tokens`` that cached part; ``output_tokens``
    includes ``reasoning_tokens``; ``requests`` the request attempts they were summed over."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        """The prompt tokens that were not cache hits (what providers bill at the full price)."""
        return self.input_tokens - self.cached_input_tokens


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

    @cached_property
    def stats(self) -> TurnStats | None:
        """This turn's figures (:mod:`dsh_notebook.analysis.stats`): the same as ``show --stats``."""
        return session_stats(self.events).turn(self.turn)

    @property
    def usage(self) -> TurnUsage:
        """The turn's token sums, equal to its row of ``show --stats`` (see :class:`TurnUsage`)."""
        t = self.stats
        if t is None:
            return TurnUsage()
        return TurnUsage(input_tokens=t.input_tokens, cached_input_tokens=t.cached_input_tokens,
                         output_tokens=t.output_tokens, reasoning_tokens=t.reasoning_tokens, requests=t.requests)

    @property
    def duration_ms(self) -> int | None:
        t = self.stats
        return None if t is None or t.end_time is None else t.duration_ms

    @property
    def cost_usd(self) -> float | None:
        """USD for the turn's requests; ``None`` when the model's price is unknown."""
        t = self.stats
        return None if t is None else t.cost_usd

    def trajectory(self) -> str:
        """``2.41 s · 1.9k in / 42 out tokens · $0.0012`` (the summary line's figures)."""
        t = self.stats
        if t is None:
            return ""
        return (f"{fmt_ms(self.duration_ms)} · {fmt_tokens(t.input_tokens)} in / {fmt_tokens(t.output_tokens)} out "
                f"tokens · {fmt_cost(t.cost_usd)}")

    @property
    def cell(self) -> CellRef | None:
        """The notebook cell that sent this prompt (``source.cell`` of its user message)."""
        for event in self.events:
            if isinstance(event, UserMessageEvent) and event.message.source.request_id == self.request_id:
                return event.message.source.cell
        return None

    def summary(self) -> str:
        """One line: how the turn ended, where, how many tool calls, its figures, and the
        session's event count through this turn's end (:func:`~..client.summary.event_count`:
        the same number the widgets, ``%dsh sessions`` and ``show`` give)."""
        reason: str = self.reason.kind
        if self.reason.cause:
            limit = f" {self.reason.limit}" if self.reason.limit is not None else ""
            reason += f" ({self.reason.cause}{limit})"
        if self.reason.error:
            reason += f": [{self.reason.error.code}] {self.reason.error.message}"
        calls = len(self.tool_calls)
        figures = self.trajectory()
        cell = self.cell
        origin = f" · from cell [{cell.execution_count}]" if cell and cell.execution_count else ""
        return (f"{reason} · session {self.session_id} · turn {self.turn} · "
                f"{calls} tool call{'s' if calls != 1 else ''} · {figures + ' · ' if figures else ''}"
                f"{event_count(self.events):,} events in the session{origin}")

    @staticmethod
    def _outcome(name: str, res: ToolResult | None) -> str:
        if res is None:
            return "no result"
        return str(tool_outcome(name, res.message.text, is_error=bool(res.message.is_error),
                                code=res.error.code if res.error else None, meta=res.meta))

    def __repr__(self) -> str:
        return f"<TurnResult {self.summary()} · {len(self.text)} chars>"

    def __str__(self) -> str:
        """The final text. A turn that did not complete (cancelled, an error, a budget) says so
        after what text it has; one with no text says how it ended instead of an empty line."""
        if self.ok and self.text.strip():
            return self.text
        note = f"({'no final text: ' if not self.text.strip() else ''}{self.summary()})"
        return f"{self.text.rstrip()}\n{note}" if self.text.strip() else note

    def _repr_markdown_(self) -> str:
        mark = "✓" if self.ok else "⚠"
        summary = _MD_SPECIAL.sub(r"\\\g<0>", self.summary())  # it may quote a provider's error: no link, image, HTML
        return f"{mark} *{summary}*"

    def _repr_html_(self) -> str:
        mark = "✓" if self.ok else "⚠"
        color = "#2e7d32" if self.ok else "#b26a00"
        rows = "".join(
            f"<li><code>{html.escape(call.name)}</code> {html.escape(self._outcome(call.name, res))}</li>"
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


def parse_event(data: Mapping[str, Any] | AnyEvent) -> AnyEvent:
    if isinstance(data, Mapping):
        return EventAdapter.validate_python(data)  # type: ignore[no-any-return]
    return data


def turn_result(model: ClientSessionModel, session_id: str, request_id: str) -> TurnResult | None:
    """The result of ``request_id`` once its turn ended (``None`` before). Call under the model's lock."""
    end = model.submission_outcome(request_id)
    if end is None:
        return None
    sub = model.submissions[request_id]
    reason = TurnEndReason.model_validate(end["reason"])
    turn = end["turn"] if end["turn"] is not None else sub["turn"]
    if turn is None or sub["seq"] is None:  # canceled from the inbox: it never ran
        return TurnResult(text="", session_id=session_id, turn=0, reason=reason, request_id=request_id)
    last = end["seq"] if end["seq"] is not None else model.cursor
    events = model.events[: max(0, last - model.start)]
    first = next((i for i, e in enumerate(events) if isinstance(e, TurnStart) and e.turn == turn), None)
    if first is None:  # the follow began inside the turn: from this prompt's user message
        first = max(0, sub["seq"] - model.start - 1)
    own = tuple(events[first:])
    return TurnResult(text=final_text(own), session_id=session_id, turn=turn, reason=reason,
                      events=own, request_id=request_id)


def final_text(events: tuple[AnyEvent, ...] | list[AnyEvent]) -> str:
    """The text of the last assistant message that has any."""
    for event in reversed(events):
        if isinstance(event, AssistantMessageEvent) and event.message.text:
            return event.message.text
    return ""
