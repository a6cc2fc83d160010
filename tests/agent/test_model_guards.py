"""Issue 20, agent side: bounded output, the window and its source, never an oversized request,
the no-progress guard, tool choice per turn. Scripted models and the loopback server at the
boundary; the agent, its session and its tools are real."""

from __future__ import annotations

import dataclasses
from typing import Any

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.agent.trim import CUT_MARKER
from dsh_notebook.models.base import BlockStart, Finish, StreamChunk, TextDelta, ToolCallDelta
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.session.session import Session
from dsh_notebook.tools.base import Tool, ToolContext, ToolOutput
from dsh_notebook.tools.registry import ToolRegistry
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    RequestFrozen,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from tests.support.fake_openai import FakeOpenAIServer, error_reply, text_reply, tool_call_reply

from .fakes import ChunkModel, EchoArgs, calls, echo_tool, make_agent, text


def ends(agent: Agent) -> list[TurnEnd]:
    return [e for e in agent.session.events if isinstance(e, TurnEnd)]


def frozen(agent: Agent) -> list[RequestFrozen]:
    return [e for e in agent.session.events if isinstance(e, RequestFrozen)]


def all_answered(agent: Agent) -> bool:
    events = agent.session.events
    n_calls = sum(isinstance(e, ToolCall) for e in events)
    n_results = sum(isinstance(e, ToolResult) and e.surface_op is None for e in events)
    return not agent.session.open_tool_calls() and n_calls == n_results


async def run(agent: Agent, prompt: str = "go") -> None:
    agent.followup(prompt)
    await agent.wait_idle()


# -- item 1: bounded output -----------------------------------------------------------------------
async def test_every_request_carries_an_output_limit() -> None:
    model = ChunkModel(text("a"), text("b"), text("c"))
    agent = make_agent(model)
    await run(agent)  # window unknown: the default bound
    agent.config.context_window = 4000
    await run(agent)  # a quarter of the window
    agent.config.max_tokens = 50
    await run(agent)  # the configured value
    assert [r.config["max_tokens"] for r in model.requests] == [8192, 1000, 50]
    assert [f.max_tokens for f in frozen(agent)] == [8192, 1000, 50]


async def test_the_output_limit_is_never_more_than_what_is_left_of_the_window() -> None:
    model = ChunkModel(text("ok"))
    agent = make_agent(model, context_window=2000, max_tokens=1500)
    await run(agent, "x" * 3200)  # about 800 tokens of prompt
    (request,) = model.requests
    assert 256 <= request.config["max_tokens"] <= 1200


async def test_a_response_cut_by_the_limit_keeps_its_text_and_answers_the_cut_call() -> None:
    log: list[str] = []
    cut: list[StreamChunk] = [BlockStart(0, "text"), TextDelta(0, "Let me look"), BlockStart(1, "tool-call", id="c1", name="echo"),
           ToolCallDelta(1, "c1", '{"text": "abc', name="echo"), Finish("max-tokens")]
    agent = make_agent(ChunkModel(cut), echo_tool(log))
    await run(agent)
    (end,) = ends(agent)
    assert end.reason.kind == "max-tokens"
    message = next(e.message for e in agent.session.events if isinstance(e, AssistantMessageEvent))
    assert message.text == "Let me look" and [c.arguments for c in message.tool_calls] == ["{}"]
    (result,) = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert result.error is not None and result.error.code == "TRUNCATED_CALL" and '{"text": "abc' in result.message.text
    assert log == [] and all_answered(agent)


# -- item 3: the window and where it came from ------------------------------------------------------
async def test_the_window_comes_from_the_flag_then_the_server_then_the_catalog() -> None:
    server = ChunkModel(text("a"), text("b"), text("c"), window=3000)
    agent = Agent(Session("s_w", cwd="/tmp"), AgentConfig(model="openai:gpt-4o"), adapter_for=lambda _m: server)
    await run(agent)
    await run(agent)
    agent.config.context_window = 5000
    await run(agent)
    assert [(f.context_window, f.window_source) for f in frozen(agent)] == [
        (3000, "server"), (3000, "server"), (5000, "flag")]
    assert server.window_asked == 1  # once per model
    silent = ChunkModel(text("a"))  # its server cannot tell
    other = Agent(Session("s_c", cwd="/tmp"), AgentConfig(model="openai:gpt-4o"), adapter_for=lambda _m: silent)
    await run(other)
    assert [(f.context_window, f.window_source) for f in frozen(other)] == [(128_000, "catalog")]
    assert agent.describe()["windowSource"] == "flag"


# -- item 4: never send what cannot fit --------------------------------------------------------------
def _big_tool(size: int) -> Tool:
    async def run_tool(args: EchoArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput("line of output\n" * (size // 15))

    return Tool("dump", "Print a lot.", EchoArgs, run_tool, concurrency_safe=True)


async def test_an_oversized_tool_result_is_cut_with_a_marker_before_the_server_sees_it(
    fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter
) -> None:
    fake_openai.max_request_chars = 9000  # the server refuses anything longer
    fake_openai.enqueue(tool_call_reply([("d1", "dump", "{}")]), text_reply("It printed lines."))
    agent = Agent(Session("s_fit", cwd="/tmp"), AgentConfig(model="openai:fake-model", context_window=1500),
                  adapter_for=lambda _m: adapter, tools=ToolRegistry([_big_tool(30_000)]))
    await run(agent, "print a lot")
    (end,) = ends(agent)
    assert end.reason.kind == "completed", end.reason
    assert [r.status for r in fake_openai.requests] == [200, 200]  # nothing was refused
    tool_msg = next(m for m in fake_openai.requests[-1].messages if m["role"] == "tool")
    assert CUT_MARKER.split("{count}")[1].strip()[:40] in tool_msg["content"]
    cut = [e for e in agent.session.events if isinstance(e, ToolResult) and e.surface_op is not None]
    assert len(cut) == 1 and all_answered(agent)


async def test_a_user_message_that_alone_cannot_fit_ends_the_turn_with_context_overflow() -> None:
    model = ChunkModel(text("never"))
    agent = make_agent(model, context_window=1000)
    await run(agent, "y" * 20_000)
    (end,) = ends(agent)
    assert end.reason.kind == "error" and end.reason.error is not None
    assert end.reason.error.code == "CONTEXT_OVERFLOW" and "the user message at seq" in end.reason.error.message
    assert model.requests == []  # never a request the server must refuse
    said = end.reason.error.message  # what to change (issue 39 item 11)
    assert all(w in said for w in ("%dsh compact", "--context-window N", "--max-tokens N")), said


async def test_a_server_that_still_overflows_after_compacting_says_what_to_change(
    fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter
) -> None:
    """The provider's own context-length error, again after the compaction it caused: the turn's
    error is CONTEXT_OVERFLOW with the server's words and what to change, once."""
    overflow = error_reply(400, "too long", code="context_length_exceeded")
    fake_openai.enqueue(overflow, text_reply("Summary: the user said hello."), overflow)
    agent = Agent(Session("s_over", cwd="/tmp"), AgentConfig(model="openai:fake-model"),
                  adapter_for=lambda _m: adapter, tools=ToolRegistry([]))
    await run(agent, "hello")
    (end,) = ends(agent)
    assert end.reason.error is not None and end.reason.error.code == "CONTEXT_OVERFLOW"
    said = end.reason.error.message
    assert "too long" in said and said.count("%dsh compact") == 1 and "--context-window N" in said, said


# -- item 6: the no-progress guard ---------------------------------------------------------------------
def _denied_agent(model: ChunkModel, **kw: Any) -> tuple[Agent, list[str]]:
    log: list[str] = []
    tool = dataclasses.replace(echo_tool(log), approval="ask")
    return make_agent(model, tool, policy_mode="deny", **kw), log


async def test_a_call_denied_again_and_again_is_told_it_will_not_help_then_ends_stuck() -> None:
    model = ChunkModel(*[calls((f"c{i}", "echo", '{"text": "hi"}')) for i in range(5)])
    agent, log = _denied_agent(model)
    await run(agent)
    results = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert [r.error.code for r in results if r.error] == ["DENIED"] * 3 and log == []
    assert "will not help" not in results[0].message.text
    assert "Repeating it will not help" in results[1].message.text
    (end,) = ends(agent)
    assert end.reason.kind == "stuck" and end.reason.cause == "echo"
    assert len(model.requests) == 3 and all_answered(agent)


async def test_the_guard_is_off_with_max_repeats_zero_and_resets_on_a_different_answer() -> None:
    model = ChunkModel(*[calls((f"c{i}", "echo", '{"text": "hi"}')) for i in range(4)], text("giving up"))
    agent, _ = _denied_agent(model, max_repeats=0)
    await run(agent)
    assert ends(agent)[0].reason.kind == "completed" and len(model.requests) == 5
    varied = ChunkModel(*[calls((f"v{i}", "echo", f'{{"text": "{i % 2}"}}')) for i in range(4)], text("done"))
    agent2 = make_agent(varied, echo_tool())
    await run(agent2)
    assert ends(agent2)[0].reason.kind == "completed"  # never the same answer twice in a row


async def test_a_denial_counts_whatever_the_arguments() -> None:
    """SmolLM2 under ``--approve deny`` asked for bash again and again with a new command each time
    (its last call's id): a denial answers the tool, so the third in a row ends the turn."""
    model = ChunkModel(*[calls((f"c{i}", "echo", f'{{"text": "call_{i}"}}')) for i in range(6)])
    agent, log = _denied_agent(model)
    await run(agent)
    results = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert [r.error.code for r in results if r.error] == ["DENIED"] * 3 and log == []
    assert "echo was denied the same way 2 times in a row, whatever its arguments" in results[1].message.text
    (end,) = ends(agent)
    assert end.reason.kind == "stuck" and end.reason.cause == "echo" and len(model.requests) == 3


async def test_the_same_call_answered_the_same_way_ends_stuck_even_when_it_succeeds() -> None:
    """A small real model called ``glob`` with one pattern 50 times (each answered "No files match")
    until ``max_steps``: the same result for the same call counts like the same error."""
    log: list[str] = []
    model = ChunkModel(*[calls((f"c{i}", "echo", '{"text": "hi"}')) for i in range(6)])
    agent = make_agent(model, echo_tool(log))
    await run(agent)
    results = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert log == ["hi"] * 3 and not any(r.message.is_error for r in results)  # run each time, all succeeded
    assert results[0].message.text == "echo: hi"
    assert "answered with the same result 2 times in a row" in results[1].message.text
    (end,) = ends(agent)
    assert end.reason.kind == "stuck" and end.reason.cause == "echo"
    assert len(model.requests) == 3 and all_answered(agent)


async def test_a_repeated_call_whose_answer_changes_is_progress_and_a_command_keeps_its_exit_line() -> None:
    count: list[str] = []

    async def tick(args: EchoArgs, ctx: ToolContext) -> ToolOutput:
        count.append(args.text)
        return ToolOutput(f"ran {len(count) // 4} time(s)\n[exit code: 0]")  # changes every 4th call

    tool = Tool("tick", "Count.", EchoArgs, tick)
    model = ChunkModel(*[calls((f"c{i}", "tick", '{"text": "x"}')) for i in range(6)], text("done"))
    agent = make_agent(model, tool, max_repeats=3)
    await run(agent)
    results = [e.message for e in agent.session.events if isinstance(e, ToolResult)]
    assert ends(agent)[0].reason.kind == "completed" and len(results) == 6  # 3, then a new answer, then 3
    noted = [m for m in results if "will not help" in m.text]
    assert len(noted) == 2 and all(m.exit_code == 0 and m.text.endswith("\n[exit code: 0]") for m in noted)


async def test_one_batch_of_denied_calls_counts_once() -> None:
    """A batch is one step: the model asked for all of it before any answer (seven ``touch``
    variants under a deny rule, in one response, then an answer)."""
    batch = calls(*[(f"c{i}", "echo", f'{{"text": "touch m{i}"}}') for i in range(7)])
    agent, log = _denied_agent(ChunkModel(batch, text("ok, I will not")))
    await run(agent)
    results = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert len(results) == 7 and all(r.error and r.error.code == "DENIED" for r in results) and log == []
    assert not any("will not help" in r.message.text for r in results)
    assert ends(agent)[0].reason.kind == "completed"


# -- item 7: tool choice per turn ----------------------------------------------------------------------
async def test_no_tools_offers_none_and_a_call_anyway_is_not_run() -> None:
    log: list[str] = []
    model = ChunkModel(calls(("c1", "echo", '{"text": "x"}')), text("plain answer"))
    agent = make_agent(model, echo_tool(log), tools=())
    await run(agent)
    assert [r.tools for r in model.requests] == [(), ()]
    (result,) = [e for e in agent.session.events if isinstance(e, ToolResult)]
    assert result.error is not None and result.error.code == "UNKNOWN_TOOL" and log == []


async def test_a_tools_list_offers_only_those_tools() -> None:
    model = ChunkModel(text("a"), text("b"))
    agent = make_agent(model, echo_tool(), _big_tool(10), tools=("dump",))
    await run(agent)
    agent.config.tools = None
    await run(agent)
    assert [sorted(t.name for t in r.tools) for r in model.requests] == [["dump"], ["dump", "echo"]]


def test_the_loop_benchmark_runs_to_its_end_with_the_guard_on() -> None:
    """``make bench``'s loop benchmark calls one no-op with the same arguments every step (the peers'
    method); it sets a repeat limit it never reaches, so the guard's work stays in every step and
    the run still completes (it asserts ``completed`` itself). Ours only, six steps."""
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_loop.py"
    done = subprocess.run([sys.executable, str(bench), "--steps", "6", "--history", "8", "--rounds", "1",
                           "--peers", ""], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "where a step goes" in done.stdout and "dsh_notebook" in done.stdout
