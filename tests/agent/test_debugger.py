"""The agent debugger on a real Agent loop: pause at each stage, step, edit, cancel while paused.

The model is the chunk-script boundary fake; the tools, the scheduler, the Session and the
request builder are the real ones. The "person" is the test: it waits for ``paused`` items on
the agent's live sink and answers through the Debugger, as ``session/debug`` does."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_notebook.errors import HostError
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import AssistantMessageEvent, DebugEdit, ToolCall, ToolResult, TurnEnd
from dsh_notebook.wire.messages import ToolMessage, user_text
from dsh_notebook.wire.stages import STAGE_KEYS

from .fakes import ChunkModel, calls, echo_tool, make_agent, reload, text


class Person:
    """Collects the agent's paused/resumed items and lets a test wait for the next pause."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.pauses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def __call__(self, item: Any) -> None:
        frame = dump(item)
        if frame.get("type") in ("paused", "resumed"):
            self.items.append(frame)
        if frame.get("type") == "paused":
            self.pauses.put_nowait(frame)

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.pauses.get(), 10)


def tool_texts(request: Any) -> list[str]:
    return [m.text for m in request.messages if isinstance(m, ToolMessage)]


async def test_step_walks_the_six_stages_in_order() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"hi"}')), text("done"))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["05"])
    agent.followup("say hi")
    seen = []
    first = await person.next()  # 05 of step 1 (the first request's messages derived)
    seen.append(first["stage"])
    agent.debugger.resume("step")
    for _ in range(7):
        paused = await person.next()
        seen.append(paused["stage"])
        agent.debugger.resume("step")
    last = await person.next()  # 01 of the final answer
    seen.append(last["stage"])
    agent.debugger.set_breakpoints([])
    agent.debugger.resume("continue")
    await agent.wait_idle()
    assert seen == ["05", "06", "01", "02", "03", "04", "05", "06", "01"]
    by_stage = {p["stage"]: p for p in person.items if p["type"] == "paused"}
    call = next(e for e in agent.session.events if isinstance(e, ToolCall))
    assert by_stage["02"]["callId"] == "c1" and by_stage["02"]["seq"] == call.seq
    assert by_stage["02"]["editable"] == "arguments" and by_stage["04"]["editable"] == "result"
    assert by_stage["04"]["payload"]["result"] == "echo: hi"
    assert "editable" not in by_stage["01"] and "editable" not in by_stage["05"]
    assert any(m.get("toolCallId") == "c1" for m in by_stage["05"]["payload"]["messages"])
    assert [i["type"] for i in person.items].count("resumed") == len(seen)
    assert agent.session.events[-1].type == "turn/end"


async def test_edit_the_result_at_04_reaches_the_next_request_and_is_logged() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"hi"}')), text("done"))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["04"])
    agent.followup("say hi")
    paused = await person.next()
    assert paused["stage"] == "04" and paused["payload"]["result"] == "echo: hi"
    with pytest.raises(HostError) as wrong:
        agent.debugger.edit("arguments", {"text": "x"})
    assert wrong.value.code == "BAD_EDIT"
    with pytest.raises(HostError):
        agent.debugger.edit("result", {"not": "text"})
    edit = agent.debugger.edit("result", "MARKER-7f3", call_id="c1", by="test")
    agent.debugger.resume("continue")
    await agent.wait_idle()
    assert "MARKER-7f3" in tool_texts(model.requests[1])
    events = agent.session.events
    call = next(e for e in events if isinstance(e, ToolCall))
    logged = next(e for e in events if isinstance(e, DebugEdit))
    assert logged.seq == edit.seq and (logged.target, logged.stage, logged.by) == ("result", "04", "test")
    assert (logged.before, logged.after, logged.call_id) == ("echo: hi", "MARKER-7f3", "c1")
    assert logged.source_event_seqs == (call.seq,)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.message.text == "MARKER-7f3" and result.source_event_seqs == (call.seq, edit.seq)
    restored = reload(agent.session)  # the log with the edit is a valid log
    assert restored.derive_messages()[-2].text == "MARKER-7f3"  # type: ignore[union-attr]
    with pytest.raises(HostError) as not_paused:
        agent.debugger.resume("continue")
    assert not_paused.value.code == "NOT_PAUSED"


async def test_edit_arguments_at_03_runs_the_edited_call_and_the_model_sees_it() -> None:
    ran: list[str] = []
    model = ChunkModel(calls(("c1", "echo", '{"text":"original"}')), text("done"))
    person = Person()
    agent = make_agent(model, echo_tool(ran), frames=person)
    agent.debugger.set_breakpoints(["03"], tools=["echo"])
    agent.followup("go")
    paused = await person.next()
    assert paused["stage"] == "03" and json.loads(paused["payload"]["arguments"]) == {"text": "original"}
    with pytest.raises(HostError):
        agent.debugger.edit("arguments", "[1, 2]")  # not an object
    agent.debugger.edit("arguments", {"text": "edited"})
    agent.debugger.resume("continue")
    await agent.wait_idle()
    assert ran == ["edited"]
    second = model.requests[1]
    assistant = next(m for m in second.messages if m.role == "assistant")
    assert json.loads(assistant.tool_calls[0].arguments) == {"text": "edited"}  # type: ignore[union-attr]
    assert tool_texts(second) == ["echo: edited"]
    events = agent.session.events
    replaced = [e for e in events if isinstance(e, AssistantMessageEvent) and e.surface_op is not None]
    assert len(replaced) == 1 and replaced[0].surface_op.start_seq == events[replaced[0].source_event_seqs[0]].seq  # type: ignore[union-attr,index]
    reload(agent.session)


async def test_edit_the_request_at_06_changes_what_is_sent() -> None:
    model = ChunkModel(text("ok"))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["06"])
    agent.followup("the original question")
    paused = await person.next()
    assert paused["stage"] == "06" and paused["editable"] == "request"
    messages = paused["payload"]["messages"]
    user = next(m for m in messages if m["role"] == "user" and m.get("source", {}).get("kind") == "user")
    user["content"] = [{"type": "text", "text": "an edited question"}]
    before = len(agent.session.events)
    with pytest.raises(HostError) as unpaired:
        agent.debugger.edit("request", [{"role": "tool", "toolCallId": "nope", "content": []}])
    assert unpaired.value.code == "BAD_EDIT"
    assert str(unpaired.value) == ("[BAD_EDIT] the edited messages do not pair tool calls and results — call 'nope' at message 0: "
                                   "a result before any assistant message; nothing was applied")
    assert len(agent.session.events) == before  # a refused edit logs nothing
    edit = agent.debugger.edit("request", messages)
    agent.debugger.resume("continue")
    await agent.wait_idle()
    sent = [b.text for m in model.requests[0].messages if m.role == "user" for b in m.content]  # type: ignore[union-attr]
    assert "an edited question" in sent and "the original question" not in sent
    answer = next(e for e in agent.session.events if isinstance(e, AssistantMessageEvent))
    assert answer.source_event_seqs == (edit.seq,)


async def test_cancel_while_paused_answers_every_call_and_other_agents_go_on() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"a"}'), ("c2", "echo", '{"text":"b"}')), text("done"))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    other = make_agent(ChunkModel(text("the other session answered")), echo_tool())
    agent.debugger.set_breakpoints(["03"])
    agent.followup("go")
    await person.next()
    other.followup(user_text("meanwhile"))
    await asyncio.wait_for(other.wait_idle(), 10)  # a paused run holds up no other session
    assert any(isinstance(e, AssistantMessageEvent) for e in other.session.events)
    assert await agent.cancel()
    events = agent.session.events
    results = [e for e in events if isinstance(e, ToolResult)]
    assert sorted(r.message.tool_call_id for r in results) == ["c1", "c2"]
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.reason.kind == "aborted"
    assert person.items[-1] == {"type": "resumed", "stage": "03", "how": "cancel"}
    reload(agent.session)


async def test_cancel_while_paused_at_01_still_answers_the_calls() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"a"}')))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["01"])
    agent.followup("go")
    assert (await person.next())["stage"] == "01"
    await agent.cancel()
    results = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert [r.message.tool_call_id for r in results] == ["c1"] and results[0].message.is_error


def test_breakpoints_are_validated() -> None:
    agent = make_agent(ChunkModel(), echo_tool())
    for bad in (["07"], "03", [3]):
        with pytest.raises(HostError) as err:
            agent.debugger.set_breakpoints(bad)  # type: ignore[arg-type]
        assert err.value.code == "BAD_ARGS"
    agent.debugger.set_breakpoints(list(STAGE_KEYS), tools=["bash"])
    assert agent.debugger.wants("03", ["bash"]) and not agent.debugger.wants("03", ["read"])
    agent.debugger.set_breakpoints([])
    assert not agent.debugger.active
