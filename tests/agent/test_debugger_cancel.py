"""Cancel while the debugger holds a finished tool at 04: the tool did run, so its real output is
the call's result (not a CANCELLED that would lose what it printed or changed); the call still
gets exactly one result and the turn ends aborted."""

from __future__ import annotations

from dsh_notebook.wire.events import ToolResult, TurnEnd

from .fakes import ChunkModel, calls, echo_tool, make_agent, reload, text
from .test_debugger import Person


async def test_cancel_while_paused_at_04_keeps_the_tool_output() -> None:
    model = ChunkModel(calls(("c1", "echo", '{"text":"kept"}'), ("c2", "echo", '{"text":"never run"}')), text("done"))
    person = Person()
    agent = make_agent(model, echo_tool(), frames=person)
    agent.debugger.set_breakpoints(["04"])
    agent.followup("go")
    paused = await person.next()
    assert paused["stage"] == "04" and paused["callId"] == "c1" and paused["payload"]["result"] == "echo: kept"
    assert await agent.cancel()
    events = agent.session.events
    results = {r.message.tool_call_id: r for r in events if isinstance(r, ToolResult)}
    assert sorted(results) == ["c1", "c2"]
    assert results["c1"].message.text == "echo: kept" and not results["c1"].message.is_error
    assert results["c2"].message.is_error  # never ran: the abort answer
    end = events[-1]
    assert isinstance(end, TurnEnd) and end.reason.kind == "aborted"
    assert person.items[-1] == {"type": "resumed", "stage": "04", "how": "cancel"}
    reload(agent.session)
