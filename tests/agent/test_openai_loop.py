"""The loop through the real ``openai`` SDK and a loopback OpenAI-compatible server (real HTTP/SSE)."""

from __future__ import annotations

import asyncio

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.session.session import Session
from dsh_notebook.tools.registry import ToolRegistry, builtin_tools
from dsh_notebook.wire.events import LlmRetry, ToolResult, TurnEnd
from tests.support.fake_openai import FakeOpenAIServer, error_reply, text_reply, tool_call_reply

from .fakes import sleep_tool


def make(adapter: OpenAICompatAdapter, cwd: str, registry: ToolRegistry) -> Agent:
    session = Session("s_http", cwd=cwd)
    return Agent(session, AgentConfig(model="openai:fake-model", retry_base_ms=1), adapter_for=lambda _m: adapter,
                 tools=registry)


async def test_full_loop_with_retry_parallel_calls_and_quirks(fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    ws = copy_demo_workspace()
    fake_openai.enqueue(
        error_reply(503, "overloaded"),
        tool_call_reply([("call_a", "read", '{"file_path":"README.md"}'), ("call_b", "read", '{"file_path":"package.json"}')],
                        text="Reading both.", quirks=["index-zero", "repeat-ids"]),
        text_reply("Both files read: the project is demo-math."),
    )
    agent = make(adapter, str(ws), ToolRegistry(builtin_tools()))
    agent.followup("read README.md and package.json")
    await agent.wait_idle()
    s = agent.session
    end = next(e for e in s.events if isinstance(e, TurnEnd))
    assert end.reason.kind == "completed", end.reason
    assert [r.error.code for r in s.events if isinstance(r, LlmRetry)] == ["SERVER_ERROR"]
    results = [e for e in s.events if isinstance(e, ToolResult)]
    assert [r.message.tool_call_id for r in results] == ["call_a", "call_b"]
    assert "demo-math" in results[0].message.text and '"test"' in results[1].message.text
    assert [r.status for r in fake_openai.requests] == [503, 200, 200]  # every request passed validation
    last = fake_openai.requests[-1].messages
    assert [m["role"] for m in last] == ["system", "user", "user", "assistant", "tool", "tool"]
    assert last[3]["content"] == "Reading both." and [c["id"] for c in last[3]["tool_calls"]] == ["call_a", "call_b"]


async def test_after_cancel_mid_batch_the_next_request_is_valid(fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    started = asyncio.Event()
    fake_openai.enqueue(
        tool_call_reply([("k1", "sleep", '{"seconds": 30}'), ("k2", "sleep", '{"seconds": 30}')]),
        text_reply("ok, stopped"),
    )
    agent = make(adapter, "/tmp", ToolRegistry([sleep_tool(started)]))
    agent.followup("sleep twice")
    await started.wait()
    await agent.cancel()
    await agent.wait_idle()
    agent.followup("what happened?")
    await agent.wait_idle()
    ends = [e.reason.kind for e in agent.session.events if isinstance(e, TurnEnd)]
    assert ends == ["aborted", "completed"]
    assert [r.status for r in fake_openai.requests] == [200, 200]
    tools = [m for m in fake_openai.requests[-1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["k1", "k2"]
