"""What an agent sees comes from its Scope: scoped tools run, tools/* hooks apply, close disposes."""

from __future__ import annotations

from dsh_notebook.context import HarnessContext
from dsh_notebook.tools.outcome import PolicyVerdict
from dsh_notebook.wire.events import ToolResult

from .fakes import ChunkModel, calls, echo_tool, make_agent, text


async def test_a_tool_contributed_to_the_agent_scope_is_offered_and_runs() -> None:
    log: list[str] = []
    model = ChunkModel(calls(("c1", "echo", '{"text":"scoped"}')), text("done"))
    host = HarnessContext("host")
    agent = make_agent(model, context=host)
    agent.context.tool(echo_tool(log))
    agent.followup("go")
    await agent.wait_idle()
    assert [t.name for t in model.requests[0].tools] == ["echo"]
    assert log == ["scoped"]
    # a sibling agent in the same host context does not see it
    other_model = ChunkModel(text("hi"))
    other = make_agent(other_model, context=host)
    other.followup("go")
    await other.wait_idle()
    assert other_model.requests[0].tools == ()


async def test_pre_and_post_execute_hooks_from_the_host_context() -> None:
    host = HarnessContext("host")
    host.on("tools/pre-execute", lambda inv, verdict: PolicyVerdict("deny", "read-only hour", "hook")
            if inv.name == "echo" else None)
    seen: list[str] = []
    host.on("tools/post-execute", lambda inv, outcome: seen.append(outcome.code or "ok"))
    model = ChunkModel(calls(("c1", "echo", '{"text":"x"}')), text("done"))
    agent = make_agent(model, echo_tool(), context=host)
    agent.followup("go")
    await agent.wait_idle()
    result = next(e for e in agent.session.events if isinstance(e, ToolResult))
    assert result.error is not None and result.error.code == "DENIED" and "read-only hour" in result.message.text
    assert seen == ["DENIED"]


async def test_close_disposes_the_agent_context() -> None:
    host = HarnessContext("host")
    agent = make_agent(ChunkModel(), context=host)
    assert [c["name"] for c in host.describe()["children"]] == ["agent:s_test"]
    assert host.describe()["children"][0]["services"][0]["name"] == "agent"
    await agent.close()
    assert host.describe()["children"] == [] and agent.context.disposed
