"""The spans of one turn, from its events (GenAI semantic conventions); see :mod:`.otel`.

Times and figures come from :func:`dsh_notebook.analysis.stats.session_stats`, so a trace shows
exactly what ``show --stats`` shows. A span still open when the events stop (a crash) ends at the
last event's time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..analysis.stats import RequestStats, ToolStats, session_stats
from ..errors import redact
from ..providers import telemetry_name
from ..wire.events import AnyEvent, AssistantMessageEvent, ToolCall, ToolResult, UserMessageEvent
from .otel_external import external_spans

AttributeValue = str | bool | int | float
"""An OpenTelemetry span attribute value as this exporter sets them (scalars only)."""

_NS = 1_000_000


def _ns(ms: int) -> int:
    return ms * _NS


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": redact(text)}]}], ensure_ascii=False)


def _status(span: Any, error: str | None) -> None:
    if error:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, error))


def build_turn_spans(tracer: Any, session_id: str, events: Sequence[AnyEvent], *, capture: bool = False) -> int:
    """Start and end the spans of the turn(s) in ``events`` on ``tracer``; returns how many."""
    from opentelemetry import trace

    stats = session_stats(events)
    provider = next((r.provider for r in stats.requests), "dsh")
    base: dict[str, AttributeValue] = {"gen_ai.conversation.id": session_id,
                                     "gen_ai.provider.name": telemetry_name(provider)}
    if not stats.turns:
        return external_spans(tracer, base, events, {}, capture=capture)  # external reads between turns
    last_ms = max(e.time for e in events)
    by_seq = {e.seq: e for e in events}
    n = 0
    turn_ctx: dict[int, Any] = {}
    for t in stats.turns:
        end_ms = t.end_time if t.end_time is not None else last_ms
        turn_span = tracer.start_span(
            "invoke_agent dsh", start_time=_ns(t.start_time),
            attributes={**base, "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "dsh",
                        "dsh.turn": t.turn, "dsh.seq": t.seq, "dsh.turn.reason": t.reason or "open",
                        "gen_ai.usage.input_tokens": t.input_tokens, "gen_ai.usage.output_tokens": t.output_tokens,
                        **({"dsh.cost_usd": t.cost_usd} if t.cost_usd is not None else {})})
        if capture:
            _turn_content(turn_span, [e for e in events if getattr(e, "turn", None) == t.turn])
        if t.reason not in (None, "completed"):
            _status(turn_span, t.reason)
        turn_ctx[t.turn] = trace.set_span_in_context(turn_span)
        n += _steps(tracer, turn_ctx[t.turn], base, t, stats, by_seq, capture, end_ms)
        n += external_spans(tracer, base, [e for e in events if getattr(e, "turn", None) == t.turn], turn_ctx,
                            capture=capture)
        turn_span.end(end_time=_ns(end_ms))
        n += 1
    return n + external_spans(tracer, base, [e for e in events if getattr(e, "turn", 0) is None], {}, capture=capture)


def _steps(tracer: Any, turn_ctx: Any, base: dict[str, AttributeValue], t: Any, stats: Any, by_seq: dict[int, AnyEvent],
           capture: bool, end_ms: int) -> int:
    from opentelemetry import trace

    n = 0
    for s in t.steps:
        step_end = s.end_time if s.end_time is not None else end_ms
        step_span = tracer.start_span(f"step {s.step}", context=turn_ctx, start_time=_ns(s.start_time),
                                      attributes={**base, "dsh.turn": t.turn, "dsh.step": s.step, "dsh.seq": s.seq})
        step_ctx = trace.set_span_in_context(step_span)
        for r in (r for r in stats.requests if r.turn == t.turn and r.step == s.step):
            _request_span(tracer, step_ctx, base, r, by_seq, capture, step_end)
            n += 1
        for c in (c for c in stats.tools if c.turn == t.turn and c.step == s.step):
            _tool_span(tracer, step_ctx, base, c, by_seq, capture, step_end)
            n += 1
        step_span.end(end_time=_ns(step_end))
        n += 1
    return n


def _turn_content(span: Any, events: Sequence[AnyEvent]) -> None:
    users = [e.message for e in events if isinstance(e, UserMessageEvent)]
    # the person's prompt, not the runtime context that comes before it (nor a summary)
    prompt = next((m for m in users if m.source.kind == "user"), users[0] if users else None)
    answer = next((e.message for e in reversed(events) if isinstance(e, AssistantMessageEvent)), None)
    if prompt is not None:
        span.set_attribute("gen_ai.input.messages", _messages("user", "".join(b.text for b in prompt.content)))
    if answer is not None:
        span.set_attribute("gen_ai.output.messages", _messages("assistant", answer.text))


def _request_span(tracer: Any, ctx: Any, base: dict[str, AttributeValue], r: RequestStats, by_seq: dict[int, AnyEvent],
                  capture: bool, fallback_end: int) -> None:
    attrs: dict[str, AttributeValue] = {**base, "gen_ai.operation.name": "chat", "gen_ai.request.model": r.model,
                             "gen_ai.provider.name": telemetry_name(r.provider),
                             "dsh.seq": r.seq, "dsh.attempt": r.attempt}
    optional = {"gen_ai.usage.input_tokens": r.input_tokens, "gen_ai.usage.output_tokens": r.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": r.cached_input_tokens,
                "gen_ai.usage.reasoning.output_tokens": r.reasoning_tokens,
                "dsh.ttft_ms": r.ttft_ms, "dsh.first_byte_ms": r.first_byte_ms, "dsh.cost_usd": r.cost_usd,
                "dsh.context_used": r.context_used, "dsh.result_seq": r.result_seq}
    attrs.update({k: v for k, v in optional.items() if v is not None})
    result = by_seq.get(r.result_seq) if r.result_seq is not None else None
    if isinstance(result, AssistantMessageEvent):
        attrs["gen_ai.response.model"] = result.message.model or r.model
        if capture:
            attrs["gen_ai.output.messages"] = _messages("assistant", result.message.text)
    span = tracer.start_span(f"chat {r.model}", context=ctx, start_time=_ns(r.sent_time), attributes=attrs)
    if r.first_delta_time is not None:
        span.add_event("gen_ai.first_token", timestamp=_ns(r.first_delta_time))
    _status(span, r.error or ("OPEN" if r.outcome == "open" else None))
    span.end(end_time=_ns(r.end_time if r.end_time is not None else fallback_end))


def _tool_span(tracer: Any, ctx: Any, base: dict[str, AttributeValue], c: ToolStats, by_seq: dict[int, AnyEvent],
               capture: bool, fallback_end: int) -> None:
    attrs: dict[str, AttributeValue] = {**base, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": c.name,
                             "gen_ai.tool.call.id": c.call_id, "gen_ai.tool.type": "function", "dsh.seq": c.seq}
    if c.approval_wait_ms is not None:
        attrs["dsh.approval_wait_ms"] = c.approval_wait_ms
        attrs["dsh.approval"] = c.approval or ""
    if capture:
        call = by_seq.get(c.seq)
        if isinstance(call, ToolCall):
            attrs["gen_ai.tool.call.arguments"] = redact(call.arguments)
        result = by_seq.get(c.result_seq) if c.result_seq is not None else None
        if isinstance(result, ToolResult):
            attrs["gen_ai.tool.call.result"] = redact(result.message.text)
    span = tracer.start_span(f"execute_tool {c.name}", context=ctx, start_time=_ns(c.start_time), attributes=attrs)
    if c.approval_asked_time is not None and c.approval_wait_ms is not None:
        span.add_event("dsh.approval.asked", timestamp=_ns(c.approval_asked_time))
        span.add_event("dsh.approval.decided", {"dsh.approval": c.approval or ""},
                       timestamp=_ns(c.approval_asked_time + c.approval_wait_ms))
    _status(span, c.error)
    span.end(end_time=_ns(c.end_time if c.end_time is not None else fallback_end))
