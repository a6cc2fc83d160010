"""Helpers for the tool tests: tool-call blocks, a frame recorder, small gated test tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from dsh_notebook.session import Session
from dsh_notebook.tools import ApprovalRequest, Tool, ToolContext, ToolOutput
from dsh_notebook.tools.base import ApprovalDecision, Approver
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import ApprovalAsked, ApprovalDecided, ToolCall, ToolResult
from dsh_notebook.wire.messages import ToolCallBlock


def call(name: str, args: dict[str, Any] | str | None = None, call_id: str = "c1") -> ToolCallBlock:
    """A tool-call block as the model would produce it (``args`` str = raw JSON text)."""
    raw = args if isinstance(args, str) else json.dumps(args or {})
    return ToolCallBlock(id=call_id, name=name, arguments=raw)


class Frames(list[dict[str, Any]]):
    """A frame sink that records ``tool-runtime`` frames in their wire form."""

    def __call__(self, frame: BaseModel) -> None:
        self.append(dump(frame))

    def phases(self, call_id: str) -> list[tuple[str, str]]:
        return [
            (f["frame"]["phase"], f["frame"]["status"])
            for f in self
            if f["frame"]["callId"] == call_id
        ]


class KeyArgs(BaseModel):
    key: str


class Gates:
    """Test tools whose bodies wait on per-key events, so a test decides completion order.

    ``started`` records body starts in order; ``active`` / ``peak`` count concurrent bodies;
    ``finished`` records completion order; ``cancelled`` the keys whose body was cancelled.
    """

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.active = 0
        self.peak = 0
        self.changed = asyncio.Event()

    def gate(self, key: str) -> asyncio.Event:
        return self.events.setdefault(key, asyncio.Event())

    def open(self, key: str) -> None:
        self.gate(key).set()

    async def wait_started(self, *keys: str) -> None:
        while not all(k in self.started for k in keys):
            self.changed.clear()
            await self.changed.wait()

    async def body(self, args: KeyArgs, ctx: ToolContext) -> ToolOutput:
        self.started.append(args.key)
        self.changed.set()
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await self.gate(args.key).wait()
        except asyncio.CancelledError:
            self.cancelled.append(args.key)
            raise
        finally:
            self.active -= 1
        self.finished.append(args.key)
        return ToolOutput(f"done {args.key}")

    def tool(self, name: str, *, safe: bool, approval: str = "allow") -> Tool:
        return Tool(
            name=name,
            description=f"gated test tool {name}",
            args_model=KeyArgs,
            execute=self.body,
            concurrency_safe=safe,
            approval=approval,  # type: ignore[arg-type]
        )


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


class FakeApprover(Approver):
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


def log(session: Session) -> list[str]:
    """The batch as the log shows it: ``call:<id>`` and ``result:<id>:<code or ok>``."""
    out = []
    for e in session.events:
        if isinstance(e, ToolCall):
            out.append(f"call:{e.call_id}")
        elif isinstance(e, ToolResult):
            out.append(f"result:{e.message.tool_call_id}:{e.error.code if e.error else 'ok'}")
    return out


def assert_paired(session: Session) -> None:
    """Every tool/result cites exactly the seq of a tool/call with its id; no call is left open."""
    for e in session.events:
        if isinstance(e, ToolResult):
            assert e.source_event_seqs is not None and len(e.source_event_seqs) == 1
            cited = session.events[e.source_event_seqs[0]]
            assert isinstance(cited, ToolCall) and cited.call_id == e.message.tool_call_id
    assert session.open_tool_calls() == {}


async def until(cond: Callable[[], bool]) -> None:
    for _ in range(10_000):
        if cond():
            return
        await asyncio.sleep(0)
    raise AssertionError("condition never became true")


def keyed(name: str, key: str, call_id: str | None = None) -> ToolCallBlock:
    return call(name, {"key": key}, call_id or key)


def procs_with(token: str) -> list[int]:
    """Host PIDs of live (non-zombie) processes whose command line contains ``token``.

    Inside a bubblewrap sandbox ``$!`` is a PID of the sandbox's own namespace, so tests find
    the processes a command started by a unique token in their arguments instead."""
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(token in part for part in proc.info["cmdline"] or ()):
                found.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


async def none_left(token: str) -> bool:
    """True once no process carries ``token`` (kills are synchronous; this lets exits finish)."""
    for _ in range(300):
        if not procs_with(token):
            return True
        await asyncio.sleep(0.01)
    return False
