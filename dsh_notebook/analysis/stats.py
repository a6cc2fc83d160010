"""The trajectory of a session in numbers (issue 12): one pure fold over its events.

Every figure is derived from facts the log already holds — nothing here is stored:

- a **request attempt** is sent at its ``request/frozen`` ``time``; its response head came at
  ``firstByteTime`` and its first delta (text, reasoning or tool call) at the earliest
  ``stream[].time0`` of the ``assistant/message`` (or ``assistant/attempt``) that ends it, at that
  event's ``time``. ``ttftMs`` = first delta − sent (reasoning counts: the first token);
  ``firstContentMs`` the same for the first text or tool-call delta; ``durationMs`` = end − sent. Tokens are the
  provider's: ``inputTokens`` is the whole prompt (cached input included, as providers count it),
  ``cachedInputTokens`` the cache hits, ``outputTokens`` includes ``reasoningTokens``;
  ``costUsd`` from :mod:`dsh_notebook.session.catalog` (``None`` for an unknown model, never a
  guess); ``contextUsed`` = prompt tokens / the context window (``None`` when unknown): the
  caller's override (``show --stats --context-window N``), else the one the request recorded
  (``request/frozen.contextWindow``), else the catalog's.
- a **tool call** starts at ``tool/call`` and ends at its ``tool/result`` (``finishedTime`` when
  the result waited for earlier ones); ``approvalWaitMs`` = ``approval/decided`` − ``approval/asked``.
- a **turn** and a **step** run from their start to their end event.
- **decisions** (issue 36): every ``approval/decided`` counted by the ``mode`` it was made in —
  allow / deny / cancelled, and by what decided it (``rule``, ``grant``, ``mode``, ``user``);
  ``asked`` counts the ``approval/asked`` of that mode. Each tool call carries its ``mode``,
  ``decider`` and ``decision``.

Used by ``show --stats``, :class:`~dsh_notebook.notebook.cell.result.TurnResult`, the ``%dsh``
summary line and the OpenTelemetry export, so a live run and its saved log show the same figures.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import Any

from ..session.catalog import Catalog, Price, context_window, default_catalog
from ..wire.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    RequestFrozen,
    RequestHeader,
    StepEnd,
    StepStart,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    Usage,
)
from .stats_model import (
    ModeDecisions,
    RequestStats,
    SessionStats,
    StepStats,
    ToolStats,
    Totals,
    TurnStats,
    stats_schema,
)

__all__ = ["ModeDecisions", "RequestStats", "SessionStats", "StepStats", "ToolStats", "Totals", "TurnStats", "session_stats",
           "stats_schema"]


def _ms(end: int | None, start: int | None) -> int | None:
    return None if end is None or start is None else max(0, end - start)


# The fold accumulates plain dicts (snake_case field names) and builds the models once at the end:
# pydantic attribute assignment would dominate the cost on 100k-event sessions.
Acc = dict[str, Any]


def _close_request(req: Acc, ev: AssistantMessageEvent | AssistantAttempt, catalog: _Prices) -> None:
    req["result_seq"], req["end_time"], req["first_byte_time"] = ev.seq, ev.time, ev.first_byte_time
    if ev.stream:
        req["first_delta_time"] = min(run.time0 for run in ev.stream)
        content = [run.time0 for run in ev.stream if run.kind != "reasoning"]
        req["first_content_time"] = min(content) if content else None
    if isinstance(ev, AssistantAttempt):
        req["outcome"], req["error"] = "error", ev.error.code if ev.error else None
    else:
        req["outcome"] = "interrupted" if ev.interrupted else "completed"
        if ev.usage is not None:
            _usage(req, ev.usage, catalog)
    sent, first = req["sent_time"], req.get("first_delta_time")
    req["first_byte_ms"] = _ms(ev.first_byte_time, sent)
    req["ttft_ms"] = _ms(first, sent)
    req["first_content_ms"] = _ms(req.get("first_content_time"), sent)
    req["stream_ms"] = _ms(ev.time, first)
    req["duration_ms"] = _ms(ev.time, sent)


class _Prices:
    """The catalog's prices, looked up once per model during one fold."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.seen: dict[tuple[str, str], Price | None] = {}

    def price(self, provider: str, model: str) -> Price | None:
        key = (provider, model)
        if key not in self.seen:
            self.seen[key] = self.catalog.price(provider, model)
        return self.seen[key]


def _usage(req: Acc, usage: Usage, catalog: _Prices) -> None:
    cached = usage.cache_read_tokens or 0
    req["input_tokens"] = usage.input_tokens + cached
    req["cached_input_tokens"] = cached
    req["output_tokens"] = usage.output_tokens
    req["reasoning_tokens"] = usage.reasoning_tokens
    price = catalog.price(req["provider"], req["model"])
    req["cost_usd"] = None if price is None else price.cost(usage)
    if req.get("context_window"):
        req["context_used"] = req["input_tokens"] / req["context_window"]


def _add(acc: Acc, reqs: Iterable[Acc], tools: Iterable[Acc]) -> None:
    n = tokens_in = cached = tokens_out = reasoning = 0
    priced: list[float | None] = []
    for r in reqs:
        n += 1
        if r.get("input_tokens") is None:
            continue
        tokens_in += r["input_tokens"]
        cached += r["cached_input_tokens"]
        tokens_out += r["output_tokens"]
        reasoning += r["reasoning_tokens"] or 0
        priced.append(r["cost_usd"])
        if r.get("context_window"):
            acc["context_window"], acc["context_used"] = r["context_window"], r.get("context_used")
            acc["window_source"] = r.get("window_source")
    acc.update(requests=n, input_tokens=tokens_in, cached_input_tokens=cached, output_tokens=tokens_out,
               reasoning_tokens=reasoning,
               cost_usd=sum(c for c in priced if c is not None) if priced and None not in priced else None)
    waits = [t.get("approval_wait_ms") or 0 for t in tools]
    acc["tool_calls"], acc["approval_wait_ms"] = len(waits), sum(waits)


def session_stats(
    events: Iterable[AnyEvent], *, context_window_override: int | None = None, catalog: Catalog | None = None
) -> SessionStats:
    """Fold ``events`` (a whole log, or any prefix of one) into :class:`SessionStats`."""
    was_enabled = gc.isenabled()
    gc.disable()  # many small, long-lived objects and no garbage: skip the rescans
    try:
        return _fold(events, context_window_override, _Prices(catalog or default_catalog()))
    finally:
        if was_enabled:
            gc.enable()


def _fold(events: Iterable[AnyEvent], override: int | None, catalog: _Prices) -> SessionStats:
    windows: dict[tuple[str, str, int | None], int | None] = {}
    requests: list[Acc] = []
    tools: list[Acc] = []
    turns: list[Acc] = []
    open_req: Acc | None = None
    calls: dict[int, Acc] = {}
    by_id: dict[str, Acc] = {}
    asked: dict[str, int] = {}
    decisions: dict[str, Acc] = {}
    turn: Acc | None = None
    sent: dict[str, Any] = {}  # the last request/header's config: what every request carries
    for ev in events:
        if isinstance(ev, RequestHeader):
            sent = {k: v for k, v in ev.config.items() if k not in ("provider", "model")}
        elif isinstance(ev, RequestFrozen):
            key = (ev.provider, ev.model, override or ev.context_window)
            if key not in windows:
                windows[key] = context_window(ev.provider, ev.model, key[2])
            open_req = {"seq": ev.seq, "turn": ev.turn, "step": ev.step, "attempt": ev.attempt,
                        "provider": ev.provider, "model": ev.model, "sent_time": ev.time,
                        "context_window": windows[key], "window_source": "flag" if override else ev.window_source,
                        "max_tokens": ev.max_tokens if ev.max_tokens is not None else sent.get("max_tokens"),
                        "options": {k: v for k, v in sent.items() if k != "max_tokens"}}
            requests.append(open_req)
        elif isinstance(ev, AssistantMessageEvent | AssistantAttempt):
            if open_req is not None:
                _close_request(open_req, ev, catalog)
                open_req = None
        elif isinstance(ev, ToolCall):
            tool = {"call_id": ev.call_id, "name": ev.name, "seq": ev.seq, "turn": ev.turn, "step": ev.step,
                    "start_time": ev.time}
            calls[ev.seq] = by_id[ev.call_id] = tool
            tools.append(tool)
        elif isinstance(ev, ApprovalAsked):
            asked[ev.call_id] = ev.time
            _decisions(decisions, ev.mode)["asked"] += 1
        elif isinstance(ev, ApprovalDecided):
            found = by_id.get(ev.call_id)
            if found is not None and ev.call_id in asked:
                found["approval_asked_time"] = asked.pop(ev.call_id)
                found["approval_wait_ms"] = _ms(ev.time, found["approval_asked_time"])
                found["approval"] = ev.decision
            if found is not None:
                found.update(mode=ev.mode, decider=ev.decider, decision=ev.decision)
            counts = _decisions(decisions, ev.mode)
            counts["decisions"] += 1
            counts[ev.decision] += 1
            if ev.decider is not None:
                counts[f"by_{ev.decider}"] += 1
        elif isinstance(ev, ToolResult):
            src = ev.source_event_seqs[0] if ev.source_event_seqs else None
            found = calls.get(src) if src is not None else by_id.get(ev.message.tool_call_id)
            if found is not None and "result_seq" not in found:
                end = ev.finished_time if ev.finished_time is not None else ev.time
                duration = _ms(end, found["start_time"])
                found.update(result_seq=ev.seq, end_time=end, duration_ms=duration,
                             error=ev.error.code if ev.error else None, exit_code=ev.message.exit_code)
                if duration is not None:
                    found["run_ms"] = max(0, duration - (found.get("approval_wait_ms") or 0))
        elif isinstance(ev, TurnStart):
            turn = {"turn": ev.turn, "seq": ev.seq, "start_time": ev.time, "steps": []}
            turns.append(turn)
        elif isinstance(ev, TurnEnd) and turn is not None and turn["turn"] == ev.turn:
            turn.update(end_seq=ev.seq, end_time=ev.time, reason=ev.reason.kind,
                        duration_ms=_ms(ev.time, turn["start_time"]) or 0)
        elif isinstance(ev, StepStart) and turn is not None:
            turn["steps"].append({"step": ev.step, "seq": ev.seq, "start_time": ev.time})
        elif isinstance(ev, StepEnd) and turn is not None and turn["steps"] and turn["steps"][-1]["step"] == ev.step:
            last = turn["steps"][-1]
            last.update(end_time=ev.time, duration_ms=_ms(ev.time, last["start_time"]))
    return _build(requests, tools, turns, list(decisions.values()))


def _decisions(by_mode: dict[str, Acc], mode: str | None) -> Acc:
    key = mode or "unrecorded"
    found = by_mode.get(key)
    if found is None:
        found = by_mode[key] = {"mode": key, "decisions": 0, "allow": 0, "deny": 0, "cancelled": 0, "asked": 0,
                                "by_rule": 0, "by_grant": 0, "by_mode": 0, "by_user": 0}
    return found


def _build(requests: list[Acc], tools: list[Acc], turns: list[Acc], decisions: list[Acc]) -> SessionStats:
    reqs_by_turn: dict[int, list[Acc]] = {}
    tools_by_turn: dict[int, list[Acc]] = {}
    for r in requests:
        reqs_by_turn.setdefault(r["turn"], []).append(r)
    for c in tools:
        tools_by_turn.setdefault(c["turn"], []).append(c)
    for t in turns:
        t["turns"] = 1
        _add(t, reqs_by_turn.get(t["turn"], ()), tools_by_turn.get(t["turn"], ()))
        t["steps"] = [StepStats.model_validate(s) for s in t["steps"]]
    totals: Acc = {}
    _add(totals, requests, tools)
    totals["turns"] = len(turns)
    totals["duration_ms"] = sum(t.get("duration_ms") or 0 for t in turns)
    return SessionStats(
        requests=[RequestStats.model_validate(r) for r in requests],
        tools=[ToolStats.model_validate(c) for c in tools],
        turns=[TurnStats.model_validate(t) for t in turns],
        totals=Totals.model_validate(totals),
        decisions=[ModeDecisions.model_validate(d) for d in decisions],
    )
