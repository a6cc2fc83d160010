"""The trajectory of a session in numbers (issue 12): one pure fold over its events.

Every figure is derived from facts the log already holds — nothing here is stored:

- a **request attempt** is sent at its ``request/frozen`` ``time``; its response head came at
  ``firstByteTime`` and its first delta (text, reasoning or tool call) at the earliest
  ``stream[].time0`` of the ``assistant/message`` (or ``assistant/attempt``) that ends it, at that
  event's ``time``. ``ttftMs`` = first delta − sent; ``durationMs`` = end − sent. Tokens are the
  provider's: ``inputTokens`` is the whole prompt (cached input included, as providers count it),
  ``cachedInputTokens`` the cache hits, ``outputTokens`` includes ``reasoningTokens``;
  ``costUsd`` from :mod:`dsh_notebook.models.catalog` (``None`` for an unknown model, never a
  guess); ``contextUsed`` = prompt tokens / the context window (``None`` when unknown).
- a **tool call** starts at ``tool/call`` and ends at its ``tool/result`` (``finishedTime`` when
  the result waited for earlier ones); ``approvalWaitMs`` = ``approval/decided`` − ``approval/asked``.
- a **turn** and a **step** run from their start to their end event.

Used by ``show --stats``, :class:`~dsh_notebook.notebook.result.TurnResult`, the ``%dsh``
summary line and the OpenTelemetry export, so a live run and its saved log show the same figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ..models.catalog import PRICES_AS_OF, Catalog, context_window, default_catalog
from .events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    RequestFrozen,
    StepEnd,
    StepStart,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)


class _Out(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True)


class RequestStats(_Out):
    seq: int
    turn: int
    step: int
    attempt: int
    provider: str
    model: str
    outcome: Literal["completed", "interrupted", "error", "open"] = "open"
    error: str | None = None
    result_seq: int | None = None
    sent_time: int
    first_byte_time: int | None = None
    first_delta_time: int | None = None
    end_time: int | None = None
    first_byte_ms: int | None = None
    ttft_ms: int | None = None
    stream_ms: int | None = None
    duration_ms: int | None = None
    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    context_window: int | None = None
    context_used: float | None = None


class ToolStats(_Out):
    call_id: str
    name: str
    seq: int
    turn: int
    step: int
    start_time: int
    end_time: int | None = None
    result_seq: int | None = None
    duration_ms: int | None = None
    approval_asked_time: int | None = None
    approval_wait_ms: int | None = None
    approval: str | None = None
    run_ms: int | None = None
    error: str | None = None


class StepStats(_Out):
    step: int
    seq: int
    start_time: int
    end_time: int | None = None
    duration_ms: int | None = None


class Totals(_Out):
    turns: int = 0
    requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    duration_ms: int = 0
    approval_wait_ms: int = 0
    context_window: int | None = None
    context_used: float | None = None
    prices_as_of: str = PRICES_AS_OF


class TurnStats(Totals):
    turn: int
    seq: int
    start_time: int
    end_seq: int | None = None
    end_time: int | None = None
    reason: str | None = None
    steps: list[StepStats] = []


class SessionStats(_Out):
    requests: list[RequestStats] = []
    tools: list[ToolStats] = []
    turns: list[TurnStats] = []
    totals: Totals = Totals()

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def turn(self, turn: int) -> TurnStats | None:
        return next((t for t in self.turns if t.turn == turn), None)


def _ms(end: int | None, start: int | None) -> int | None:
    return None if end is None or start is None else max(0, end - start)


def _close_request(req: RequestStats, ev: AssistantMessageEvent | AssistantAttempt, catalog: Catalog) -> None:
    req.result_seq, req.end_time = ev.seq, ev.time
    req.first_byte_time = ev.first_byte_time
    if ev.stream:
        req.first_delta_time = min(run.time0 for run in ev.stream)
    if isinstance(ev, AssistantAttempt):
        req.outcome, req.error = "error", ev.error.code if ev.error else None
    else:
        req.outcome = "interrupted" if ev.interrupted else "completed"
        _usage(req, ev.usage, catalog)
    req.first_byte_ms = _ms(req.first_byte_time, req.sent_time)
    req.ttft_ms = _ms(req.first_delta_time, req.sent_time)
    req.stream_ms = _ms(req.end_time, req.first_delta_time)
    req.duration_ms = _ms(req.end_time, req.sent_time)


def _usage(req: RequestStats, usage: Usage | None, catalog: Catalog) -> None:
    if usage is None:
        return
    cached = usage.cache_read_tokens or 0
    req.input_tokens = usage.input_tokens + cached
    req.cached_input_tokens = cached
    req.output_tokens = usage.output_tokens
    req.reasoning_tokens = usage.reasoning_tokens
    price = catalog.price(req.provider, req.model)
    req.cost_usd = None if price is None else price.cost(usage)
    if req.context_window:
        req.context_used = req.input_tokens / req.context_window


def _add(acc: Totals, reqs: Iterable[RequestStats], tools: Iterable[ToolStats]) -> None:
    priced: list[float | None] = []
    for r in reqs:
        acc.requests += 1
        if r.input_tokens is None:
            continue
        acc.input_tokens += r.input_tokens
        acc.cached_input_tokens += r.cached_input_tokens or 0
        acc.output_tokens += r.output_tokens or 0
        acc.reasoning_tokens += r.reasoning_tokens or 0
        priced.append(r.cost_usd)
        if r.context_window:
            acc.context_window, acc.context_used = r.context_window, r.context_used
    acc.cost_usd = sum(c for c in priced if c is not None) if priced and None not in priced else None
    for t in tools:
        acc.tool_calls += 1
        acc.approval_wait_ms += t.approval_wait_ms or 0


def session_stats(
    events: Iterable[AnyEvent], *, context_window_override: int | None = None, catalog: Catalog | None = None
) -> SessionStats:
    """Fold ``events`` (a whole log, or any prefix of one) into :class:`SessionStats`."""
    catalog = catalog or default_catalog()
    windows: dict[tuple[str, str], int | None] = {}
    out = SessionStats()
    open_req: RequestStats | None = None
    calls: dict[int, ToolStats] = {}
    by_id: dict[str, ToolStats] = {}
    asked: dict[str, int] = {}
    turn: TurnStats | None = None
    for ev in events:
        if isinstance(ev, RequestFrozen):
            key = (ev.provider, ev.model)
            if key not in windows:
                windows[key] = context_window(ev.provider, ev.model, context_window_override)
            open_req = RequestStats(seq=ev.seq, turn=ev.turn, step=ev.step, attempt=ev.attempt,
                                    provider=ev.provider, model=ev.model, sent_time=ev.time,
                                    context_window=windows[key])
            out.requests.append(open_req)
        elif isinstance(ev, AssistantMessageEvent | AssistantAttempt):
            if open_req is not None:
                _close_request(open_req, ev, catalog)
                open_req = None
        elif isinstance(ev, ToolCall):
            tool = ToolStats(call_id=ev.call_id, name=ev.name, seq=ev.seq, turn=ev.turn, step=ev.step,
                             start_time=ev.time)
            calls[ev.seq] = by_id[ev.call_id] = tool
            out.tools.append(tool)
        elif isinstance(ev, ApprovalAsked):
            asked[ev.call_id] = ev.time
        elif isinstance(ev, ApprovalDecided):
            tool_or_none = by_id.get(ev.call_id)
            if tool_or_none is not None and ev.call_id in asked:
                tool_or_none.approval_asked_time = asked.pop(ev.call_id)
                tool_or_none.approval_wait_ms = _ms(ev.time, tool_or_none.approval_asked_time)
                tool_or_none.approval = ev.decision
        elif isinstance(ev, ToolResult):
            src = ev.source_event_seqs[0] if ev.source_event_seqs else None
            tool_or_none = calls.get(src) if src is not None else by_id.get(ev.message.tool_call_id)
            if tool_or_none is not None and tool_or_none.result_seq is None:
                tool_or_none.result_seq = ev.seq
                tool_or_none.end_time = ev.finished_time if ev.finished_time is not None else ev.time
                tool_or_none.duration_ms = _ms(tool_or_none.end_time, tool_or_none.start_time)
                tool_or_none.error = ev.error.code if ev.error else None
                if tool_or_none.duration_ms is not None:
                    tool_or_none.run_ms = max(0, tool_or_none.duration_ms - (tool_or_none.approval_wait_ms or 0))
        elif isinstance(ev, TurnStart):
            turn = TurnStats(turn=ev.turn, seq=ev.seq, start_time=ev.time)
            out.turns.append(turn)
        elif isinstance(ev, TurnEnd) and turn is not None and turn.turn == ev.turn:
            turn.end_seq, turn.end_time, turn.reason = ev.seq, ev.time, ev.reason.kind
            turn.duration_ms = _ms(ev.time, turn.start_time) or 0
        elif isinstance(ev, StepStart) and turn is not None:
            turn.steps.append(StepStats(step=ev.step, seq=ev.seq, start_time=ev.time))
        elif isinstance(ev, StepEnd) and turn is not None and turn.steps and turn.steps[-1].step == ev.step:
            turn.steps[-1].end_time = ev.time
            turn.steps[-1].duration_ms = _ms(ev.time, turn.steps[-1].start_time)
    for t in out.turns:
        t.turns = 1
        _add(t, (r for r in out.requests if r.turn == t.turn), (c for c in out.tools if c.turn == t.turn))
    _add(out.totals, out.requests, out.tools)
    out.totals.turns = len(out.turns)
    out.totals.duration_ms = sum(t.duration_ms for t in out.turns)
    return out
