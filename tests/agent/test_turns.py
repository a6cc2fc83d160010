"""Turn and Step boundaries and each end reason (completed, blocked, error, max-tokens)."""

from __future__ import annotations

from dsh_notebook.agent.hooks import PreStep, TurnStopping
from dsh_notebook.errors import ModelError
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import (
    AssistantAttempt,
    AssistantMessageEvent,
    StepStart,
    ToolResult,
    TurnEnd,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import user_text

from .fakes import ChunkModel, calls, echo_tool, make_agent, text, types


def ends(session) -> list[TurnEnd]:
    return [e for e in session.events if isinstance(e, TurnEnd)]


async def test_completed_turn_has_the_seed_boundaries() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"hi"}')), text("done"))
    agent = make_agent(model, echo_tool())
    agent.followup("say hi")
    await agent.wait_idle()
    t = [x for x in types(agent.session) if x != "agent/inbox/spliced"]
    assert t == [
        "turn/start", "step/start", "system/message", "user/message", "user/message",
        "request/header", "request/frozen", "assistant/message", "tool/call", "approval/decided", "tool/result",
        "step/end", "step/start", "request/frozen", "assistant/message", "step/end", "turn/end",
    ]
    assert ends(agent.session)[0].reason.kind == "completed"
    result = next(e for e in agent.session.events if isinstance(e, ToolResult))
    assert result.message.text == "echo: hi"
    # the second request carried the tool result (stage 05 → 06)
    assert any(getattr(m, "tool_call_id", None) == "c1" for m in model.requests[1].messages)
    assert agent.status == "idle" and agent.current_turn is None


async def test_pre_step_reject_ends_blocked_and_claimed_input_is_gone() -> None:
    agent = make_agent(ChunkModel(text("never")))
    agent.context.on("agent/pre-step", lambda d: d.reject("policy says no"))
    agent.followup("hello")
    await agent.wait_idle()
    (end,) = ends(agent.session)
    assert end.reason.kind == "blocked" and end.reason.cause == "policy says no"
    assert "step/start" not in types(agent.session)
    assert not agent.inbox.has_pending


async def test_pre_step_may_rewrite_messages() -> None:
    model = ChunkModel(text("ok"))
    agent = make_agent(model)

    def rewrite(d: PreStep) -> PreStep:  # the runtime context comes first, the claimed prompt after it
        return d.with_messages([user_text("rewritten") if m is d.claimed[0] else m for m in d.messages])

    agent.context.on("agent/pre-step", rewrite)
    agent.followup("original")
    await agent.wait_idle()
    users = [e.message for e in agent.session.events if isinstance(e, UserMessageEvent)]
    assert [m.source.kind for m in users] == ["plugin", "user"]  # the snapshot, then the prompt
    assert users[1].content[0].text == "rewritten" and "original" not in [m.content[0].text for m in users]
    assert model.requests[0].messages[-1].content[0].text == "rewritten"  # the request ends with the prompt


async def test_non_retryable_model_error_ends_error_with_code() -> None:
    model = ChunkModel(ModelError("bad key", code="AUTH", status=401))
    agent = make_agent(model)
    agent.followup("hi")
    await agent.wait_idle()
    (end,) = ends(agent.session)
    assert end.reason.kind == "error" and end.reason.error is not None
    assert end.reason.error.code == "AUTH" and end.reason.error.status == 401
    attempt = next(e for e in agent.session.events if isinstance(e, AssistantAttempt))
    assert attempt.error is not None and attempt.error.code == "AUTH"
    assert "llm/retry" not in types(agent.session)


async def test_unexpected_exception_ends_error_unknown_and_turn_end_is_written() -> None:
    agent = make_agent(ChunkModel(RuntimeError("boom")))
    agent.followup("hi")
    await agent.wait_idle()
    (end,) = ends(agent.session)
    assert end.reason.kind == "error" and end.reason.error.code == "UNKNOWN"
    assert "boom" in end.reason.error.message


async def test_max_tokens_answers_the_cut_call_without_running_it_and_is_sticky() -> None:
    log: list[str] = []
    model = ChunkModel(calls(("c1", "echo", '{"text":"x"}'), say="partial", finish="max-tokens"), text("after steer"))
    agent = make_agent(model, echo_tool(log))

    async def steer_once(s: TurnStopping) -> None:
        if s.step == 1:
            agent.steer("continue please")

    agent.context.on("agent/turn-stopping", steer_once)
    agent.followup("go")
    await agent.wait_idle()
    first = next(e for e in agent.session.events if isinstance(e, AssistantMessageEvent))
    assert [c.id for c in first.message.tool_calls] == ["c1"] and first.message.text == "partial"
    assert log == []  # the cut call was not run ...
    result = next(e for e in agent.session.events if isinstance(e, ToolResult))
    assert result.error is not None and result.error.code == "TRUNCATED_CALL"  # ... but answered
    assert result.message.tool_call_id == "c1" and result.message.is_error
    (end,) = ends(agent.session)
    assert end.reason.kind == "max-tokens"  # step 2 completed, but max-tokens stays
    assert sum(isinstance(e, StepStart) for e in agent.session.events) == 2


async def test_turn_stopping_listener_steering_forces_another_step() -> None:
    model = ChunkModel(text("first"), text("second"))
    agent = make_agent(model)
    seen: list[int] = []

    def listener(s: TurnStopping) -> None:
        seen.append(s.step)
        if s.step == 1:
            agent.steer("one more thing")

    agent.context.on("agent/turn-stopping", listener)
    agent.followup("start")
    await agent.wait_idle()
    assert seen == [1, 2]
    assert sum(x == "turn/start" for x in types(agent.session)) == 1
    assert model.requests[1].messages[-1].content[0].text == "one more thing"


async def test_followups_each_get_their_own_turn() -> None:
    model = ChunkModel(text("a"), text("b"))
    agent = make_agent(model)
    agent.followup("first")
    agent.followup("second")
    await agent.wait_idle()
    assert [e.turn for e in ends(agent.session)] == [1, 2]
    prompts = [
        [m.content[0].text for m in r.messages if getattr(m, "role", "") == "user" and m.source.kind == "user"]
        for r in model.requests
    ]
    assert prompts == [["first"], ["first", "second"]]


async def test_deferred_context_is_appended_after_the_batch() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"a"}'), ("c2", "echo", '{"text":"b"}')), text("done"))
    agent = make_agent(model, echo_tool(defer="file changed: a.txt"))
    agent.followup("go")
    await agent.wait_idle()
    events = agent.session.events
    last_result = max(e.seq for e in events if isinstance(e, ToolResult))
    deferred = [e for e in events if isinstance(e, UserMessageEvent) and e.message.source.form == "deferred-context"]
    assert len(deferred) == 2 and all(e.seq > last_result for e in deferred)
    assert model.requests[1].messages[-1].content[0].text == "file changed: a.txt"


async def test_status_and_stream_frames() -> None:
    frames: list[dict] = []
    statuses: list[str] = []
    agent = make_agent(ChunkModel(text("hello world")), frames=lambda f: frames.append(dump(f)))
    agent.on_status(statuses.append)
    agent.followup("hi")
    await agent.wait_idle()
    assert statuses == ["running", "idle"]
    stream = [f["frame"] for f in frames if f["type"] == "assistant-stream"]
    assert stream[0]["kind"] == "start" and stream[0]["turn"] == 1 and stream[0]["step"] == 1
    assert isinstance(stream[0]["startedAfterSeq"], int)
    chunks = [f for f in stream if f["kind"] == "chunk"]
    assert [c["index"] for c in chunks] == list(range(len(chunks)))
    assert "".join(c["chunk"].get("text", "") for c in chunks if c["chunk"]["type"] == "text-delta") == "hello world"
    end = stream[-1]
    msg = next(e for e in agent.session.events if isinstance(e, AssistantMessageEvent))
    assert end["outcome"] == {"kind": "committed", "eventType": "assistant/message", "seq": msg.seq}
    assert msg.stream and "".join(msg.stream[0].parts) == "hello world"
    status = [f for f in frames if f["type"] == "status"]
    assert status[0]["status"] == "running" and status[-1]["status"] == "idle"


async def test_flush_before_each_request_and_at_turn_end_and_describe() -> None:
    flushed: list[int] = []
    model = ChunkModel(calls(("c1", "echo", '{"text":"x"}')), text("done"))
    agent = make_agent(model, echo_tool(), flush=lambda: flushed.append(agent.session.last_seq))
    model.on_request = lambda r: flushed.append(-1)  # marks when the adapter got the request
    agent.followup("go")
    await agent.wait_idle()
    s = agent.session
    frozen = [e.seq for e in s.events if e.type == "request/frozen"]
    # flushed, then sent; at the turn's end once before turn/end (a failure there becomes the
    # turn's error) and once after it
    assert flushed == [frozen[0], -1, frozen[1], -1, s.last_seq - 1, s.last_seq]
    assert s.events[-1].type == "turn/end"
    d = agent.describe()
    assert d["status"] == "idle" and d["tools"] == ["echo"] and d["lastRequestSeq"] == frozen[1]
    assert d["systemPromptOp"] == "unchanged"
    assert any(svc == "agent" for svc in d["scope"]["services"])


def test_describe_works_before_the_first_request() -> None:
    agent = make_agent(ChunkModel(text("unused")), echo_tool())
    assert agent.requests.last_request is None and agent.requests.last_frozen is None
    d = agent.describe()
    assert d["status"] == "idle" and d["lastRequestSeq"] is None and d["turn"] is None
    assert d["inbox"] == [] and d["tools"] == ["echo"]
