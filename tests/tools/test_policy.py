"""Pre-execute policy, approval (auto / deny / ask with a fake approver), hooks and guards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from dsh_notebook.session import Session
from dsh_notebook.tools import (
    ApprovalRequest,
    AutoApprover,
    DenyApprover,
    PolicyVerdict,
    ToolInvocation,
    ToolOutcome,
    ToolOutput,
    ToolRuntime,
    error_outcome,
)
from dsh_notebook.tools.base import ApprovalDecision, Approver
from dsh_notebook.wire.events import ApprovalDecided
from tests.support.tasks import cancel
from tests.tools.helpers import FakeApprover, Frames, approval_events, call, make_tool

MakeRuntime = Callable[..., ToolRuntime]


async def test_policy_modes(make_runtime: MakeRuntime, session: Session, ws: Path) -> None:
    args = {"file_path": "x.txt", "content": "hi"}
    out = await make_runtime(policy_mode="auto").run(call("write", args, "a"))
    assert out.code is None and (ws / "x.txt").read_text() == "hi"
    out = await make_runtime(policy_mode="deny").run(call("write", {**args, "content": "no"}, "d"))
    assert out.code == "DENIED" and out.text.startswith("Error: permission denied")
    assert "mode is dont-ask" in out.text and (ws / "x.txt").read_text() == "hi"
    out = await make_runtime(policy_mode="deny").run(call("read", {"file_path": "x.txt"}, "r"))
    assert out.code is None  # allow tools still run in deny mode
    # auto and deny (legacy auto, dont-ask) never ask anyone; each call's decision is logged, by the mode
    assert approval_events(session) == [("decided:allow", "a"), ("decided:deny", "d"), ("decided:allow", "r")]
    decided = [e for e in session.events if isinstance(e, ApprovalDecided)]
    assert [(e.mode, e.by, e.decider) for e in decided] == [
        ("auto", "mode", "mode"), ("dont-ask", "mode", "mode"), ("dont-ask", "mode", "mode")]


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
    assert [(e.call_id, e.decision, e.by) for e in decided] == [
        ("a", "allow", "auto"), ("b", "deny", "deny"), ("c", "deny", "no-approver")]


async def test_cancel_while_waiting_for_approval_logs_cancelled(make_runtime: MakeRuntime, session: Session) -> None:
    class Waiting(Approver):
        name = "waiting"
        asked = asyncio.Event()

        async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
            self.asked.set()
            await asyncio.Event().wait()
            return "allow"

    approver = Waiting()
    task = asyncio.ensure_future(make_runtime(policy_mode="ask", approver=approver).run(call("write", {"file_path": "q", "content": ""})))
    await approver.asked.wait()
    assert await cancel(task)
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
    assert approval_events(session) == [
        ("decided:deny", "h1"), ("decided:allow", "h2"), ("asked", "h3"), ("decided:deny", "h3")]
    decided = [e for e in session.events if isinstance(e, ApprovalDecided)]
    assert [(e.by, e.decider) for e in decided] == [("hook", "rule"), ("hook", "rule"), ("fake", "user")]


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


