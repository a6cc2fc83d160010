"""Retry inside a Step, and cancellation from any point: every call answered, turn aborted."""

from __future__ import annotations

import asyncio

from dsh_notebook.errors import ModelError
from dsh_notebook.models.base import BlockStart, TextDelta, ToolCallDelta
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import (
    AssistantAttempt,
    AssistantMessageEvent,
    LlmRetry,
    RequestFrozen,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserMessageEvent,
)

from .fakes import ChunkModel, Gate, calls, echo_tool, make_agent, sleep_tool, text, types


def turn_end(session) -> TurnEnd:
    return next(e for e in session.events if isinstance(e, TurnEnd))


async def test_retryable_errors_then_success() -> None:
    log: list[str] = []
    model = ChunkModel(
        ModelError("slow down", code="RATE_LIMITED", retryable=True, status=429, retry_after_ms=2),
        ModelError("bad gateway", code="SERVER_ERROR", retryable=True, status=502),
        calls(("c1", "echo", '{"text":"once"}')),
        text("done"),
    )
    agent = make_agent(model, echo_tool(log))
    agent.followup("go")
    await agent.wait_idle()
    s = agent.session
    retries = [e for e in s.events if isinstance(e, LlmRetry)]
    assert [(r.attempt, r.error.code) for r in retries] == [(1, "RATE_LIMITED"), (2, "SERVER_ERROR")]
    assert retries[0].delay_ms == 2  # retry_after_ms honoured
    attempts = [e for e in s.events if isinstance(e, AssistantAttempt)]
    assert [a.attempt for a in attempts] == [1, 2]
    frozen = [e for e in s.events if isinstance(e, RequestFrozen)]
    assert [(f.step, f.attempt) for f in frozen] == [(1, 1), (1, 2), (1, 3), (2, 1)]
    prompts = [e for e in s.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"]
    assert len(prompts) == 1  # appended on the first attempt only
    assert log == ["once"]  # the tool ran exactly once
    assert turn_end(s).reason.kind == "completed"
    # every attempt saw the user message (re-derived messages)
    assert all(any(getattr(m, "role", "") == "user" for m in r.messages) for r in model.requests)


async def test_retries_exhausted_end_error() -> None:
    errs = [ModelError("down", code="SERVER_ERROR", retryable=True, status=503) for _ in range(3)]
    agent = make_agent(ChunkModel(*errs), max_retries=2)
    agent.followup("go")
    await agent.wait_idle()
    s = agent.session
    assert sum(isinstance(e, LlmRetry) for e in s.events) == 2
    assert sum(isinstance(e, AssistantAttempt) for e in s.events) == 3
    end = turn_end(s)
    assert end.reason.kind == "error" and end.reason.error.code == "SERVER_ERROR"


async def test_cancel_before_the_model_call() -> None:
    model = ChunkModel(text("never"))
    agent = make_agent(model)
    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow_hook(d):
        entered.set()
        await release.wait()

    agent.context.on("agent/pre-step", slow_hook)
    agent.followup("go")
    await entered.wait()
    assert await agent.cancel() is True
    await agent.wait_idle()
    end = turn_end(agent.session)
    assert end.reason.kind == "aborted" and end.reason.cause == "user"
    assert model.requests == [] and "assistant/message" not in types(agent.session)


async def test_cancel_mid_stream_with_visible_text_commits_interrupted_message() -> None:
    gate = Gate([BlockStart(0, "text"), TextDelta(0, "Working on"), TextDelta(0, " it")])
    agent = make_agent(ChunkModel(gate))
    frames: list[dict] = []
    agent.frames = lambda f: frames.append(dump(f))
    agent.followup("go")
    await gate.reached.wait()
    await agent.cancel("user")
    await agent.wait_idle()
    s = agent.session
    msg = next(e for e in s.events if isinstance(e, AssistantMessageEvent))
    assert msg.interrupted is True and msg.message.text == "Working on it"
    assert turn_end(s).reason.kind == "aborted"
    end_frame = [f["frame"] for f in frames if f["type"] == "assistant-stream"][-1]
    assert end_frame["outcome"]["seq"] == msg.seq


async def test_cancel_mid_stream_without_text_logs_an_attempt_and_no_calls() -> None:
    gate = Gate([BlockStart(0, "tool-call", id="c1", name="echo"), ToolCallDelta(0, "c1", '{"te', name="echo")])
    agent = make_agent(ChunkModel(gate), echo_tool())
    agent.followup("go")
    await gate.reached.wait()
    await agent.cancel()
    await agent.wait_idle()
    s = agent.session
    attempt = next(e for e in s.events if isinstance(e, AssistantAttempt))
    assert attempt.error is not None and attempt.error.code == "CANCELLED"
    assert attempt.stream and attempt.stream[0].kind == "tool-call"
    assert "assistant/message" not in types(s) and "tool/call" not in types(s)
    assert s.open_tool_calls() == {}
    assert turn_end(s).reason.kind == "aborted"


async def test_cancel_mid_batch_answers_every_call() -> None:
    started = asyncio.Event()
    model = ChunkModel(calls(("c1", "sleep", '{"seconds": 30}'), ("c2", "echo", '{"text":"x"}'),
                             ("c3", "sleep", '{"seconds": 30}')))
    agent = make_agent(model, sleep_tool(started), echo_tool(safe=False))
    agent.followup("go")
    await started.wait()
    await agent.cancel()
    await agent.wait_idle()
    s = agent.session
    results = [e for e in s.events if isinstance(e, ToolResult)]
    assert [r.message.tool_call_id for r in results] == ["c1", "c2", "c3"]
    assert [r.error.code for r in results] == ["CANCELLED", "ABORTED_BEFORE_DISPATCH", "ABORTED_BEFORE_DISPATCH"]
    assert sum(isinstance(e, ToolCall) for e in s.events) == 3
    assert s.open_tool_calls() == {}
    t = types(s)
    assert t[-2:] == ["step/end", "turn/end"] and turn_end(s).reason.kind == "aborted"
    # the session can go on: the next turn's request is protocol-valid (every call answered)
    model.steps.append(text("fine"))
    agent.followup("again")
    await agent.wait_idle()
    last = model.requests[-1].messages
    ids = [m.tool_call_id for m in last if getattr(m, "role", "") == "tool"]
    assert ids == ["c1", "c2", "c3"]


async def test_cancel_while_idle_is_a_no_op_and_clears_the_queue() -> None:
    agent = make_agent(ChunkModel())
    agent.inject("context only")
    assert await agent.cancel() is False
    assert not agent.inbox.has_pending
    assert types(agent.session)[-1] == "agent/inbox/spliced"
