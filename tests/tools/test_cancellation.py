"""Cancellation of a batch: every call answered — CANCELLED, ABORTED_BEFORE_DISPATCH — then re-raised."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolContext, ToolOutput, ToolRuntime, execute_tool_calls
from dsh_notebook.tools.base import Approver
from dsh_notebook.wire.events import ToolResult
from tests.tools.helpers import Frames, Gates, assert_paired, call, keyed, log, make_tool, until

MakeRuntime = Callable[..., ToolRuntime]


@pytest.fixture
def gates() -> Gates:
    return Gates()


async def test_cancellation_mid_batch_answers_every_call(
    make_runtime: MakeRuntime, session: Session, gates: Gates, frames: Frames
) -> None:
    runtime = make_runtime([gates.tool("par", safe=True), gates.tool("ex", safe=False)])
    calls = [keyed("par", "a"), keyed("par", "b"), keyed("ex", "c"), keyed("par", "d")]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=2, step=3, runtime=runtime))
    await gates.wait_started("a", "b")
    gates.open("b")
    await until(lambda: frames.phases("b")[-1:] == [("result", "done")])  # b has its outcome
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert gates.cancelled == ["a"] and "c" not in gates.started
    assert log(session) == [
        "call:a", "call:b",
        "result:a:CANCELLED", "result:b:ok",
        "call:c", "result:c:ABORTED_BEFORE_DISPATCH",
        "call:d", "result:d:ABORTED_BEFORE_DISPATCH",
    ]
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert results[0].message.is_error and results[0].message.text.startswith("Error: ")
    assert results[2].message.text == "Error: tool call aborted before dispatch"
    assert all(r.turn == 2 and r.step == 3 for r in results)
    assert frames.phases("d") == [("result", "error")]
    assert_paired(session)


async def test_cancel_while_calls_are_still_in_policy(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    entered = asyncio.Event()

    async def slow_policy(inv: object, verdict: object) -> None:
        entered.set()
        await asyncio.Event().wait()  # a pre-execute hook that never decides

    runtime = make_runtime([gates.tool("par", safe=True)], pre_execute=[slow_policy])
    calls = [keyed("par", k) for k in "xyz"]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime))
    await entered.wait()
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert gates.started == []  # no body ever ran
    assert log(session) == [
        "call:x", "call:y", "call:z",
        "result:x:ABORTED_BEFORE_DISPATCH", "result:y:ABORTED_BEFORE_DISPATCH",
        "result:z:ABORTED_BEFORE_DISPATCH",
    ]
    assert_paired(session)


async def test_cancel_while_an_approval_is_pending(make_runtime: MakeRuntime, session: Session, ws: Path) -> None:
    asked = asyncio.Event()

    class Waiting(Approver):
        name = "waiting"

        async def decide(self, request: object) -> str:
            asked.set()
            await asyncio.Event().wait()
            return "allow"

    runtime = make_runtime(policy_mode="ask", approver=Waiting())
    calls = [
        call("write", {"file_path": "a.txt", "content": "1"}, "w1"),
        call("read", {"file_path": "a.txt"}, "r1"),
    ]
    batch = asyncio.ensure_future(execute_tool_calls(session, calls, turn=1, step=1, runtime=runtime))
    await asyncio.wait_for(asked.wait(), 10)
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert log(session) == [
        "call:w1", "result:w1:ABORTED_BEFORE_DISPATCH", "call:r1", "result:r1:ABORTED_BEFORE_DISPATCH"
    ]
    types = [e.type for e in session.events]
    assert types.count("approval/asked") == 1 and types.count("approval/decided") == 1
    assert not (ws / "a.txt").exists()
    assert_paired(session)




async def test_a_lone_call_cancelled_is_answered_cancelled_and_the_cancel_goes_on(
    make_runtime: MakeRuntime, session: Session, gates: Gates
) -> None:
    """A batch of one call runs in place (no task of its own): the same answer as in a batch."""
    runtime = make_runtime([gates.tool("par", safe=True)])
    batch = asyncio.ensure_future(execute_tool_calls(session, [keyed("par", "a")], turn=1, step=1, runtime=runtime))
    await gates.wait_started("a")
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    assert gates.cancelled == ["a"] and log(session) == ["call:a", "result:a:CANCELLED"]
    assert_paired(session)


async def test_a_lone_call_whose_tool_swallows_the_cancel_keeps_its_result_and_the_batch_still_ends_cancelled(
    make_runtime: MakeRuntime, session: Session
) -> None:
    entered = asyncio.Event()

    async def stubborn(ctx: ToolContext) -> ToolOutput:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass  # a tool that ignores the cancel and answers anyway
        return ToolOutput("finished anyway")

    runtime = make_runtime([make_tool("stubborn", stubborn, timeout_s=None)])  # no timeout task around it
    batch = asyncio.ensure_future(execute_tool_calls(session, [call("stubborn", "{}", "s1")], turn=1, step=1, runtime=runtime))
    await entered.wait()
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch  # the turn is cancelled whatever the tool did
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert [r.message.text for r in results] == ["finished anyway"]  # it ran: its real output is the answer
    assert_paired(session)
