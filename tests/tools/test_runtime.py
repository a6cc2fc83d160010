"""The ToolRuntime pipeline: every error path, policy, approval, hooks, guards, live frames."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from dsh_notebook.errors import ToolError
from dsh_notebook.session import Session
from dsh_notebook.session.events import ApprovalAsked, ApprovalDecided
from dsh_notebook.tools import (
    ApprovalRequest,
    AutoApprover,
    DenyApprover,
    PolicyVerdict,
    Tool,
    ToolContext,
    ToolInvocation,
    ToolOutcome,
    ToolOutput,
    ToolRuntime,
    error_outcome,
)
from dsh_notebook.tools.base import ApprovalDecision
from dsh_notebook.tools.builtin import read_tool, write_tool
from tests.tools.helpers import Frames, call

MakeRuntime = Callable[..., ToolRuntime]


class Empty(BaseModel):
    pass


def make_tool(name: str, fn: Callable[..., object], **kw: object) -> Tool:
    async def execute(args: Empty, ctx: ToolContext) -> ToolOutput:
        result = fn(ctx)
        if asyncio.iscoroutine(result):
            result = await result
        assert isinstance(result, ToolOutput)
        return result

    return Tool(name=name, description=name, args_model=Empty, execute=execute, **kw)  # type: ignore[arg-type]


class FakeApprover:
    """A scripted approver at the boundary: answers from a list and records the requests."""

    name = "fake"

    def __init__(self, *answers: ApprovalDecision) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return self.answers.pop(0)


def approval_events(session: Session) -> list[tuple[str, str]]:
    out = []
    for e in session.events:
        if isinstance(e, ApprovalAsked):
            out.append(("asked", e.call_id))
        elif isinstance(e, ApprovalDecided):
            out.append(("decided:" + e.decision, e.call_id))
    return out


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
    tool = make_tool("noargs", lambda ctx: seen.append("ran") or ToolOutput("fine"))
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
        raise RuntimeError("kaput sk-abcdefghijklmnop")

    def coded(ctx: ToolContext) -> ToolOutput:
        raise ToolError("specific failure", code="MY_CODE")

    runtime = make_runtime([make_tool("boom", boom), make_tool("coded", coded)])
    out = await runtime.run(call("boom", {}, "b"))
    assert out.code == "TOOL_RAISED" and out.error and out.error.name == "RuntimeError"
    assert out.text.startswith("Error: RuntimeError: kaput") and "sk-abcdef" not in out.text
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


async def test_policy_modes(make_runtime: MakeRuntime, session: Session, ws: Path) -> None:
    args = {"file_path": "x.txt", "content": "hi"}
    out = await make_runtime(policy_mode="auto").run(call("write", args, "a"))
    assert out.code is None and (ws / "x.txt").read_text() == "hi"
    out = await make_runtime(policy_mode="deny").run(call("write", {**args, "content": "no"}, "d"))
    assert out.code == "DENIED" and out.text.startswith("Error: permission denied")
    assert "policy_mode=deny" in out.text and (ws / "x.txt").read_text() == "hi"
    out = await make_runtime(policy_mode="deny").run(call("read", {"file_path": "x.txt"}, "r"))
    assert out.code is None  # allow tools still run in deny mode
    assert approval_events(session) == []  # auto and deny modes never ask anyone


async def test_ask_mode_uses_the_approver_and_logs(make_runtime: MakeRuntime, session: Session, ws: Path, frames: Frames) -> None:
    approver = FakeApprover("allow", "deny")
    runtime = make_runtime(policy_mode="ask", approver=approver)
    out = await runtime.run(call("write", {"file_path": "y.txt", "content": "ok"}, "w1"))
    assert out.code is None and (ws / "y.txt").read_text() == "ok"
    out = await runtime.run(call("write", {"file_path": "y.txt", "content": "bad"}, "w2"))
    assert out.code == "DENIED" and "refused" in out.text and (ws / "y.txt").read_text() == "ok"
    assert approval_events(session) == [
        ("asked", "w1"), ("decided:allow", "w1"), ("asked", "w2"), ("decided:deny", "w2")
    ]
    assert [r.call_id for r in approver.requests] == ["w1", "w2"]
    assert approver.requests[0].arguments == '{"file_path": "y.txt", "content": "ok"}'
    assert frames.phases("w1") == [
        ("prepare", "start"), ("prepare", "done"), ("policy", "done"), ("approval", "waiting"),
        ("approval", "allow"), ("execute", "start"), ("execute", "done"), ("result", "done"),
    ]
    assert ("approval", "deny") in frames.phases("w2") and ("execute", "start") not in frames.phases("w2")


async def test_ask_mode_with_builtin_approvers_and_none(make_runtime: MakeRuntime, session: Session) -> None:
    args = {"file_path": "z.txt", "content": "1"}
    assert (await make_runtime(policy_mode="ask", approver=AutoApprover()).run(call("write", args, "a"))).code is None
    assert (await make_runtime(policy_mode="ask", approver=DenyApprover()).run(call("write", args, "b"))).code == "DENIED"
    out = await make_runtime(policy_mode="ask").run(call("write", args, "c"))
    assert out.code == "DENIED" and "no approver" in out.text
    decided = [e for e in session.events if isinstance(e, ApprovalDecided)]
    assert [(e.call_id, e.decision, e.by) for e in decided] == [("a", "allow", "auto"), ("b", "deny", "deny")]


async def test_cancel_while_waiting_for_approval_logs_cancelled(make_runtime: MakeRuntime, session: Session) -> None:
    class Waiting:
        name = "waiting"
        asked = asyncio.Event()

        async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
            self.asked.set()
            await asyncio.Event().wait()
            return "allow"

    approver = Waiting()
    task = asyncio.ensure_future(make_runtime(policy_mode="ask", approver=approver).run(call("write", {"file_path": "q", "content": ""})))
    await approver.asked.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert task.cancelled()
    assert approval_events(session) == [("asked", "c1"), ("decided:cancelled", "c1")]


async def test_hooks_can_allow_deny_or_ask(make_runtime: MakeRuntime, session: Session, ws: Path) -> None:
    def hook(inv: ToolInvocation, verdict: PolicyVerdict) -> PolicyVerdict | str | None:
        if inv.name == "write" and "forbidden" in inv.arguments:
            return PolicyVerdict("deny", "writing forbidden files is not allowed", "hook")
        if inv.name == "write":
            return "allow"  # skip approval for the rest
        if inv.name == "read":
            return "ask"
        return None

    approver = FakeApprover("deny")
    runtime = make_runtime(policy_mode="ask", approver=approver, pre_execute=[hook])
    out = await runtime.run(call("write", {"file_path": "forbidden.txt", "content": ""}, "h1"))
    assert out.code == "DENIED" and "writing forbidden files is not allowed" in out.text
    assert (await runtime.run(call("write", {"file_path": "ok.txt", "content": ""}, "h2"))).code is None
    out = await runtime.run(call("read", {"file_path": "ok.txt"}, "h3"))
    assert out.code == "DENIED"
    assert approval_events(session) == [("asked", "h3"), ("decided:deny", "h3")]


async def test_async_hook_and_failing_hook_fail_closed(make_runtime: MakeRuntime) -> None:
    async def deny_async(inv: ToolInvocation, verdict: PolicyVerdict) -> str:
        await asyncio.sleep(0)
        return "deny"

    def broken(inv: ToolInvocation, verdict: PolicyVerdict) -> None:
        raise ValueError("hook bug")

    assert (await make_runtime(pre_execute=[deny_async]).run(call("read", {"file_path": "a"}))).code == "DENIED"
    out = await make_runtime(pre_execute=[broken]).run(call("read", {"file_path": "a"}))
    assert out.code == "DENIED" and "hook bug" in out.text


async def test_tool_default_deny(make_runtime: MakeRuntime) -> None:
    tool = make_tool("nope", lambda ctx: ToolOutput("ran"), approval="deny")
    out = await make_runtime([tool]).run(call("nope", {}))
    assert out.code == "DENIED" and "disabled" in out.text


async def test_guards_only_deny(make_runtime: MakeRuntime, frames: Frames) -> None:
    def guard(inv: ToolInvocation) -> str | None:
        return "no reading secrets" if "secret" in inv.arguments else None

    runtime = make_runtime(guards=[guard])
    out = await runtime.run(call("read", {"file_path": "secret.txt"}, "g1"))
    assert out.code == "DENIED" and "no reading secrets" in out.text
    assert ("policy", "deny") in frames.phases("g1")
    assert (await runtime.run(call("read", {"file_path": "missing.txt"}, "g2"))).code == "FILE_NOT_FOUND"


async def test_post_execute_sees_denials_and_results(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "a.txt").write_text("content\n")
    seen: list[tuple[str, str | None]] = []

    def post(inv: ToolInvocation, outcome: ToolOutcome) -> ToolOutcome | None:
        seen.append((inv.call_id, outcome.code))
        if inv.call_id == "p1":
            return error_outcome(inv.call_id, "blocked by review", "BLOCKED")
        return None

    runtime = make_runtime(policy_mode="deny", post_execute=[post])
    out = await runtime.run(call("read", {"file_path": "a.txt"}, "p1"))
    assert out.code == "BLOCKED" and out.text == "Error: blocked by review"
    out = await runtime.run(call("write", {"file_path": "b.txt", "content": ""}, "p2"))
    assert out.code == "DENIED"
    assert seen == [("p1", None), ("p2", "DENIED")]


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
    from dsh_notebook.tools import ToolRegistry

    def bad_sink(frame: dict[str, object]) -> None:
        raise RuntimeError("ui gone")

    (ws / "a.txt").write_text("ok\n")
    runtime = ToolRuntime(ToolRegistry([read_tool, write_tool]), workspace=ws, live=bad_sink)
    out = await runtime.run(call("read", {"file_path": "a.txt"}))
    assert out.code is None and "ok" in out.text
