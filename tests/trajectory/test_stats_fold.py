"""The pure stats fold over hand-written event sequences: failed attempts, crashes (open spans),
parallel tool results committed late, approvals, unknown prices and old logs without the new facts."""

from __future__ import annotations

from dsh_notebook.analysis.stats import session_stats, stats_schema
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import (
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    ErrorInfo,
    RequestFrozen,
    StepEnd,
    StepStart,
    StreamRun,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    Usage,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)


def frozen(turn: int, step: int, attempt: int, model: str = "deepseek-chat", provider: str = "deepseek") -> RequestFrozen:
    return RequestFrozen(turn=turn, step=step, attempt=attempt, provider=provider, model=model, message_seqs=())


def test_retry_parallel_tools_approval_and_a_crash() -> None:
    s = Session("s_fold")
    s.append(TurnStart(turn=1), time=1000)
    s.append(UserMessageEvent(turn=1, message=user_text("go")), time=1001)
    s.append(StepStart(turn=1, step=1), time=1002)
    s.append(frozen(1, 1, 1), time=1010)
    s.append(AssistantAttempt(turn=1, step=1, attempt=1, error=ErrorInfo(code="SERVER_ERROR", message="x"),
                              first_byte_time=1030), time=1040)
    s.append(frozen(1, 1, 2), time=1100)
    calls = (ToolCallBlock(id="a", name="bash", arguments="{}"), ToolCallBlock(id="b", name="read", arguments="{}"))
    s.append(AssistantMessageEvent(turn=1, step=1, message=AssistantMessage(content=calls), first_byte_time=1120,
                                   usage=Usage(input_tokens=100, cache_read_tokens=900, output_tokens=10),
                                   stream=(StreamRun(kind="reasoning", index=0, time0=1130),
                                           StreamRun(kind="tool-call", index=1, time0=1150))), time=1200)
    a = s.append(ToolCall(turn=1, step=1, call_id="a", name="bash", arguments="{}"), time=1210).seq
    b = s.append(ToolCall(turn=1, step=1, call_id="b", name="read", arguments="{}"), time=1211).seq
    s.append(ApprovalAsked(call_id="a", name="bash"), time=1220)
    s.append(ApprovalDecided(call_id="a", name="bash", decision="allow"), time=1520)
    s.append(ToolResult(turn=1, step=1, message=tool_text("a", "ok"), source_event_seqs=(a,)), time=1600)
    s.append(ToolResult(turn=1, step=1, message=tool_text("b", "ok"), source_event_seqs=(b,), finished_time=1250),
             time=1601)
    s.append(StepEnd(turn=1, step=1), time=1602)
    s.append(StepStart(turn=1, step=2), time=1603)
    s.append(frozen(1, 2, 1, model="mystery", provider="vllm"), time=1610)  # the process died here
    stats = session_stats(s.events)
    failed, ok, open_ = stats.requests
    assert (failed.outcome, failed.error, failed.duration_ms, failed.first_byte_ms, failed.ttft_ms) == (
        "error", "SERVER_ERROR", 30, 20, None)
    assert (ok.outcome, ok.first_byte_ms, ok.ttft_ms, ok.first_content_ms, ok.stream_ms, ok.duration_ms) == (
        "completed", 20, 30, 50, 70, 100)
    assert (ok.input_tokens, ok.cached_input_tokens, ok.output_tokens) == (1000, 900, 10)
    assert ok.cost_usd is not None and ok.context_used == 1000 / 128_000
    assert (open_.outcome, open_.end_time, open_.duration_ms, open_.cost_usd) == ("open", None, None, None)
    bash, read = stats.tools
    assert (bash.approval_wait_ms, bash.approval, bash.duration_ms, bash.run_ms) == (300, "allow", 390, 90)
    assert (read.end_time, read.duration_ms, read.approval_wait_ms) == (1250, 39, None)  # not its commit time
    (turn,) = stats.turns
    assert (turn.reason, turn.end_time, turn.requests, turn.tool_calls) == (None, None, 3, 2)
    assert [(st.step, st.duration_ms) for st in turn.steps] == [(1, 600), (2, None)]
    assert turn.cost_usd == ok.cost_usd  # failed attempts and requests without usage add nothing
    assert stats.totals.input_tokens == 1000 and stats.totals.approval_wait_ms == 300
    schema = stats_schema()
    assert {"requests", "tools", "turns", "totals"} <= set(schema["properties"])
    assert "ttftMs" in schema["$defs"]["RequestStats"]["properties"]


def test_an_unknown_price_makes_the_total_unknown_and_old_logs_still_fold() -> None:
    s = Session("s_old")
    for turn, (provider, model) in enumerate([("deepseek", "deepseek-chat"), ("vllm", "qwen")], start=1):
        s.append(TurnStart(turn=turn), time=turn * 1000)
        s.append(frozen(turn, 1, 1, model=model, provider=provider), time=turn * 1000 + 1)
        msg = AssistantMessage(content=(TextBlock(text="hi"),))
        s.append(AssistantMessageEvent(turn=turn, step=1, message=msg, usage=Usage(input_tokens=5, output_tokens=1)),
                 time=turn * 1000 + 9)  # an old log: no firstByteTime, no stream record
        s.append(TurnEnd(turn=turn, reason=TurnEndReason(kind="completed")), time=turn * 1000 + 10)
    stats = session_stats(s.events)
    assert [r.ttft_ms for r in stats.requests] == [None, None]
    assert [r.duration_ms for r in stats.requests] == [8, 8]
    assert stats.turns[0].cost_usd is not None and stats.turns[1].cost_usd is None
    assert stats.totals.cost_usd is None and stats.totals.duration_ms == 20
    payload = stats.to_json_dict()
    assert set(payload) == {"requests", "tools", "turns", "totals", "decisions"}
    assert {"seq", "model", "ttftMs", "durationMs", "inputTokens", "outputTokens", "costUsd", "contextUsed"} <= set(
        payload["requests"][0])
    assert {"inputTokens", "outputTokens", "costUsd", "durationMs"} <= set(payload["totals"])
