"""Boundary fakes for the agent tests: a chunk-script model adapter and a few test tools.

``ChunkModel`` is a model adapter (the boundary the agent talks to): each call pops the next
scripted step — a list of chunks, an exception, or a ``Gate`` that blocks mid-stream until the
test opens it — and records the request it got. Nothing inside the agent is mocked.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.models.base import (
    BlockEnd,
    BlockStart,
    Finish,
    FinishReason,
    ModelAdapter,
    ModelRequest,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh_notebook.session.session import Session
from dsh_notebook.tools.base import Tool, ToolContext, ToolOutput
from dsh_notebook.tools.registry import ToolRegistry
from dsh_notebook.wire.events import Usage
from dsh_notebook.wire.messages import TextBlock, ToolCallBlock


def text(t: str, *, finish: FinishReason = "stop", pieces: int = 2) -> list[StreamChunk]:
    step = max(1, len(t) // pieces)
    parts = [t[i : i + step] for i in range(0, len(t), step)] or [""]
    return [BlockStart(0, "text"), *(TextDelta(0, p) for p in parts), BlockEnd(0, TextBlock(text=t)),
            UsageChunk(Usage(input_tokens=10, output_tokens=len(t))), Finish(finish)]


def calls(*cs: tuple[str, str, str], say: str = "", finish: FinishReason = "tool-calls") -> list[StreamChunk]:
    out: list[StreamChunk] = []
    i = 0
    if say:
        out += [BlockStart(0, "text"), TextDelta(0, say), BlockEnd(0, TextBlock(text=say))]
        i = 1
    for k, (cid, name, args) in enumerate(cs, start=i):
        out += [BlockStart(k, "tool-call", id=cid, name=name), ToolCallDelta(k, cid, args, name=name),
                BlockEnd(k, ToolCallBlock(id=cid, name=name, arguments=args))]
    return [*out, Finish(finish)]


@dataclass
class Gate:
    """Stream ``before`` chunks, then wait until ``opened`` (the test cancels meanwhile)."""

    before: list[StreamChunk]
    after: list[StreamChunk] = field(default_factory=list)
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)


Step = list[StreamChunk] | BaseException | Gate


class ChunkModel(ModelAdapter):
    provider = "fake"

    def __init__(self, *steps: Step) -> None:
        self.steps: list[Step] = list(steps)
        self.requests: list[ModelRequest] = []
        self.on_request: Callable[[ModelRequest], None] | None = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        step = self.steps.pop(0) if self.steps else text("(no more steps)")
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Gate):
            for c in step.before:
                yield c
            step.reached.set()
            await step.opened.wait()
            for c in step.after:
                yield c
            return
        for c in step:
            await asyncio.sleep(0)
            yield c


class EchoArgs(BaseModel):
    text: str = ""


class SleepArgs(BaseModel):
    seconds: float = 10.0


def echo_tool(log: list[str] | None = None, *, defer: str | None = None, safe: bool = True) -> Tool:
    async def run(args: EchoArgs, ctx: ToolContext) -> ToolOutput:
        if log is not None:
            log.append(args.text)
        if defer:
            ctx.defer_context(defer)
        return ToolOutput(f"echo: {args.text}")

    return Tool("echo", "Echo the text back.", EchoArgs, run, concurrency_safe=safe)


def sleep_tool(started: asyncio.Event | None = None) -> Tool:
    async def run(args: SleepArgs, ctx: ToolContext) -> ToolOutput:
        if started is not None:
            started.set()
        await asyncio.sleep(args.seconds)
        return ToolOutput("slept")

    return Tool("sleep", "Sleep a while.", SleepArgs, run, concurrency_safe=True)


def make_agent(model: Any, *tools: Tool, session: Session | None = None, cwd: str = "/tmp",
               **kw: Any) -> Agent:
    session = session or Session("s_test", cwd=cwd)
    names = {f.name for f in dataclasses.fields(AgentConfig)}
    config = AgentConfig(model="fake:m1", retry_base_ms=1, **{k: kw.pop(k) for k in list(kw) if k in names})
    return Agent(session, config, adapter_for=lambda _m: model, tools=ToolRegistry(tools), **kw)


def types(session: Session) -> list[str]:
    return [e.type for e in session.events]


def reload(session: Session, **kw: Any) -> Session:
    """What a restart sees: the events parsed back from their persisted JSON lines, restored."""
    from dsh_notebook.wire.events import EventAdapter

    events = [EventAdapter.validate_json(session.line(i)) for i in range(len(session.events))]
    kw.setdefault("cwd", session.cwd)
    return Session.restore(session.id, events, **kw)
