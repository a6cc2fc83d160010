"""execute_tool_calls / commit_ready on a real Session: model order, barriers, the pool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolContext, ToolOutput, ToolRuntime, execute_tool_calls
from tests.tools.helpers import Frames, Gates, assert_paired, call, keyed, log, make_tool, until

MakeRuntime = Callable[..., ToolRuntime]


@pytest.fixture
def gates() -> Gates:
    return Gates()


async def test_out_of_order_completion_commits_in_model_order(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    runtime = make_runtime([gates.tool("par", safe=True)])
    calls = [keyed("par", k) for k in "abc"]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime))
    await gates.wait_started("a", "b", "c")
    assert log(session) == ["call:a", "call:b", "call:c"]  # all started, in model order
    gates.open("c")
    gates.open("b")
    await until(lambda: gates.finished == ["c", "b"])
    await asyncio.sleep(0)
    assert log(session) == ["call:a", "call:b", "call:c"]  # b and c wait for a
    gates.open("a")
    outcome = await batch
    assert gates.finished == ["c", "b", "a"]
    assert log(session) == ["call:a", "call:b", "call:c", "result:a:ok", "result:b:ok", "result:c:ok"]
    assert [r.message.text for r in outcome.results] == ["done a", "done b", "done c"]
    assert [r.source_event_seqs for r in outcome.results] == [(0,), (1,), (2,)]
    assert outcome.results[0].turn == 1 and outcome.results[0].step == 1
    assert_paired(session)


async def test_exclusive_calls_are_barriers(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    runtime = make_runtime([gates.tool("par", safe=True), gates.tool("ex", safe=False)])
    calls = [keyed("par", "s1"), keyed("par", "s2"), keyed("ex", "x"), keyed("par", "s3")]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime))
    await gates.wait_started("s1", "s2")
    await asyncio.sleep(0)
    assert "x" not in gates.started and log(session) == ["call:s1", "call:s2"]
    gates.open("s2")
    gates.open("s1")
    await gates.wait_started("x")
    assert gates.active == 1 and "s3" not in gates.started
    assert log(session) == ["call:s1", "call:s2", "result:s1:ok", "result:s2:ok", "call:x"]
    gates.open("x")
    await gates.wait_started("s3")
    gates.open("s3")
    await batch
    assert gates.started == ["s1", "s2", "x", "s3"]
    assert log(session) == [
        "call:s1", "call:s2", "result:s1:ok", "result:s2:ok",
        "call:x", "result:x:ok", "call:s3", "result:s3:ok",
    ]
    assert_paired(session)


async def test_pool_is_bounded_and_rolling(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    runtime = make_runtime([gates.tool("par", safe=True)])
    calls = [keyed("par", str(i)) for i in range(5)]
    batch = asyncio.ensure_future(
        execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime, max_parallel=2)
    )
    await gates.wait_started("0", "1")
    await asyncio.sleep(0)
    assert gates.started == ["0", "1"]
    gates.open("1")  # a slot frees although call 0 is still running: call 2 starts (rolling)
    await gates.wait_started("2")
    assert "3" not in gates.started
    for k in "0234":
        gates.open(k)
    outcome = await batch
    assert gates.peak == 2 and len(outcome.results) == 5
    assert [r.message.tool_call_id for r in outcome.results] == list("01234")
    assert_paired(session)


async def test_duplicate_call_ids_each_get_a_result(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    runtime = make_runtime([gates.tool("par", safe=True)])
    calls = [keyed("par", "first", "dup"), keyed("par", "second", "dup")]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime))
    await gates.wait_started("first", "second")
    gates.open("second")
    await until(lambda: gates.finished == ["second"])
    gates.open("first")
    outcome = await batch
    assert [r.message.text for r in outcome.results] == ["done first", "done second"]
    assert [r.source_event_seqs for r in outcome.results] == [(0,), (1,)]
    assert_paired(session)


@pytest.mark.integration
async def test_every_error_path_becomes_a_coded_result(
    make_runtime: MakeRuntime, session: Session, ws: Path
) -> None:
    (ws / "ok.txt").write_text("fine\n")
    calls = [
        call("read", {"file_path": "ok.txt"}, "ok"),
        call("nosuch", {}, "unknown"),
        call("read", "{bad json", "json"),
        call("read", {"offset": 2}, "args"),
        call("write", {"file_path": "w.txt", "content": "x"}, "denied"),
        call("read", {"file_path": "../../etc/passwd"}, "escape"),
        call("bash", {"command": "sleep 30", "timeout_ms": 100}, "timeout"),
    ]
    runtime = make_runtime(policy_mode="deny", pre_execute=[lambda inv, v: "allow" if inv.name == "bash" else None])
    outcome = await execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime)
    codes = {r.message.tool_call_id: (r.error.code if r.error else None) for r in outcome.results}
    assert codes == {
        "ok": None, "unknown": "UNKNOWN_TOOL", "json": "INVALID_JSON", "args": "INVALID_ARGS",
        "denied": "DENIED", "escape": "OUTSIDE_WORKSPACE", "timeout": "TIMED_OUT",
    }
    for r in outcome.results:
        assert r.message.is_error == (r.error is not None)
        if r.error:
            assert r.message.text.startswith("Error: ")
    assert [r.message.tool_call_id for r in outcome.results] == [c.id for c in calls]
    assert_paired(session)


async def test_deferred_contexts_and_conclusion_come_back_after_the_batch(
    make_runtime: MakeRuntime, session: Session
) -> None:
    def deferring(ctx: ToolContext) -> ToolOutput:
        ctx.defer_context(f"note from {ctx.call_id}")
        if ctx.call_id == "d2":
            ctx.conclude_turn()
        return ToolOutput("ok")

    runtime = make_runtime([make_tool("defer", deferring)])
    calls = [call("defer", {}, "d1"), call("defer", {}, "d2")]
    outcome = await execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime)
    assert outcome.concluded
    assert [m.content[0].text for m in outcome.deferred] == ["note from d1", "note from d2"]
    assert all(m.source.kind == "plugin" and m.source.form == "deferred-context" for m in outcome.deferred)
    assert [e.type for e in session.events] == ["tool/call", "approval/decided", "tool/result",
                                                "tool/call", "approval/decided", "tool/result"]
    assert len(session.derive_messages()) == 2  # only the two tool messages; contexts not yet


@pytest.mark.integration
async def test_bash_progress_reaches_frames_not_the_session(
    make_runtime: MakeRuntime, session: Session, frames: Frames
) -> None:
    runtime = make_runtime(policy_mode="auto")
    calls = [call("bash", {"command": "echo PROGRESS-LINE-1; echo PROGRESS-LINE-2"}, "b")]
    outcome = await execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime)
    assert "PROGRESS-LINE-2" in outcome.results[0].message.text
    progress = [f for f in frames if f["frame"]["phase"] == "progress"]
    assert progress and "PROGRESS-LINE" in progress[0]["frame"]["detail"]
    assert [e.type for e in session.events] == ["tool/call", "approval/decided", "tool/result"]
    assert all('"progress"' not in session.line(e.seq) for e in session.events)
    assert frames.phases("b")[-1] == ("result", "done")


async def test_empty_batch(make_runtime: MakeRuntime, session: Session) -> None:
    outcome = await execute_tool_calls(session, [], turn=1, step=1, runtime=make_runtime())
    assert outcome.results == [] and not outcome.concluded and len(session) == 0

