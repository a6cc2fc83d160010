"""The ToolRuntime pipeline: every error path, timeouts, wrappers, live frames and progress."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from dsh_notebook.errors import ToolError
from dsh_notebook.session import Session
from dsh_notebook.tools import ToolContext, ToolInvocation, ToolOutput, ToolRegistry, ToolRuntime
from dsh_notebook.tools.builtin import read_tool, write_tool
from tests.tools.helpers import Frames, call, make_tool

MakeRuntime = Callable[..., ToolRuntime]


async def test_unknown_tool(make_runtime: MakeRuntime, frames: Frames) -> None:
    out = await make_runtime().run(call("frobnicate", {}))
    assert out.code == "UNKNOWN_TOOL" and out.error and out.error.name == "ToolNotFoundError"
    assert out.text.startswith("Error: unknown tool 'frobnicate'") and "read" in out.text
    assert out.message.is_error and out.message.tool_call_id == "c1"
    assert frames.phases("c1") == [("prepare", "start"), ("prepare", "error"), ("result", "error")]


async def test_invalid_json(make_runtime: MakeRuntime) -> None:
    out = await make_runtime().run(call("read", '{"file_path": "README.md"'))
    assert out.code == "INVALID_JSON" and out.text.startswith("Error: ")
    assert "not valid JSON" in out.text


async def test_empty_arguments_mean_empty_object(make_runtime: MakeRuntime) -> None:
    seen: list[str] = []
    def noargs(ctx: ToolContext) -> ToolOutput:
        seen.append("ran")
        return ToolOutput("fine")

    tool = make_tool("noargs", noargs)
    out = await make_runtime([tool]).run(call("noargs", ""))
    assert out.code is None and out.text == "fine" and seen == ["ran"]
    out = await make_runtime().run(call("read", "  "))
    assert out.code == "INVALID_ARGS" and "file_path: Field required" in out.text


async def test_invalid_args_carry_the_validation_message(make_runtime: MakeRuntime) -> None:
    out = await make_runtime().run(call("read", {"file_path": 3, "bogus": 1}))
    assert out.code == "INVALID_ARGS" and out.error and out.error.name == "ValidationError"
    assert "file_path" in out.text and "bogus" in out.text
    out = await make_runtime().run(call("read", "[1, 2]"))
    assert out.code == "INVALID_ARGS" and "JSON object" in out.text


async def test_tool_raised_and_tool_error(make_runtime: MakeRuntime, frames: Frames) -> None:
    def boom(ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("kaput sk-Qm7Xc2Lp9RtV4bNw8KzY1aFh")

    def coded(ctx: ToolContext) -> ToolOutput:
        raise ToolError("specific failure", code="MY_CODE")

    runtime = make_runtime([make_tool("boom", boom), make_tool("coded", coded)])
    out = await runtime.run(call("boom", {}, "b"))
    assert out.code == "TOOL_RAISED" and out.error and out.error.name == "RuntimeError"
    assert out.text.startswith("Error: RuntimeError: kaput") and "sk-Qm7Xc" not in out.text
    assert frames.phases("b")[-2:] == [("execute", "error"), ("result", "error")]
    out = await runtime.run(call("coded", {}, "k"))
    assert out.code == "MY_CODE" and out.text == "Error: specific failure"


async def test_error_output_from_a_tool_is_prefixed(make_runtime: MakeRuntime) -> None:
    tool = make_tool("soft", lambda ctx: ToolOutput("it went wrong", is_error=True, code="SOFT"))
    out = await make_runtime([tool]).run(call("soft", {}))
    assert out.text == "Error: it went wrong" and out.code == "SOFT"


async def test_runtime_timeout_is_timed_out(make_runtime: MakeRuntime) -> None:
    finished: list[bool] = []

    async def slow(ctx: ToolContext) -> ToolOutput:
        try:
            await asyncio.Event().wait()
        finally:
            finished.append(True)
        return ToolOutput("never")

    tool = make_tool("slow", slow, timeout_s=0.05)
    out = await make_runtime([tool]).run(call("slow", {}))
    assert out.code == "TIMED_OUT" and out.error and out.error.name == "TimeoutError"
    assert "timed out after 0.05 s" in out.text
    assert finished == [True]  # the body was cancelled and awaited, not abandoned


async def test_execute_wrappers_wrap_the_body(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    order: list[str] = []

    async def outer(inv: ToolInvocation, dispatch: Callable[[], object]) -> ToolOutput:
        order.append("outer-in")
        result = await dispatch()  # type: ignore[misc]
        order.append("outer-out")
        return ToolOutput(result.text + "\n[wrapped]")

    async def inner(inv: ToolInvocation, dispatch: Callable[[], object]) -> ToolOutput:
        order.append("inner-in")
        return await dispatch()  # type: ignore[misc,no-any-return]

    out = await make_runtime(wrappers=[outer, inner]).run(call("read", {"file_path": "a.txt"}))
    assert out.text.endswith("[wrapped]") and order == ["outer-in", "inner-in", "outer-out"]


async def test_progress_goes_only_to_live_frames(make_runtime: MakeRuntime, session: Session, frames: Frames) -> None:
    def chatty(ctx: ToolContext) -> ToolOutput:
        ctx.progress("PROGRESS-MARKER 50%")
        ctx.defer_context("deferred note")
        ctx.conclude_turn()
        return ToolOutput("final")

    out = await make_runtime([make_tool("chatty", chatty)]).run(call("chatty", {}))
    assert out.text == "final" and out.deferred == ["deferred note"] and out.concludes
    progress = [f["frame"] for f in frames if f["frame"]["phase"] == "progress"]
    assert [p["detail"] for p in progress] == ["PROGRESS-MARKER 50%"]
    assert all(isinstance(f["frame"]["time"], int) and f["type"] == "tool-runtime" for f in frames)
    assert not any("PROGRESS-MARKER" in session.line(e.seq) for e in session.events)


async def test_failing_live_sink_never_breaks_a_call(ws: Path) -> None:

    def bad_sink(frame: object) -> None:
        raise RuntimeError("ui gone")

    (ws / "a.txt").write_text("ok\n")
    runtime = ToolRuntime(ToolRegistry([read_tool, write_tool]), workspace=ws, frames=bad_sink)
    out = await runtime.run(call("read", {"file_path": "a.txt"}))
    assert out.code is None and "ok" in out.text

