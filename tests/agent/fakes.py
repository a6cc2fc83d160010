"""Boundary fakes for the agent tests: the chunk-script model adapter of
:mod:`dsh_notebook.testing` (``ChunkModel``: each call pops the next scripted step — a list of
chunks, an exception, or a ``Gate`` that blocks mid-stream until the test opens it — and records
the request it got) and a few test tools. Nothing inside the agent is mocked.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from pydantic import BaseModel

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.session.session import Session
from dsh_notebook.testing.models import CannedModel, Gate, call_chunks, text_chunks
from dsh_notebook.tools.base import Tool, ToolContext, ToolOutput
from dsh_notebook.tools.registry import ToolRegistry

ChunkModel = CannedModel  # the agent tests' names for them
text = text_chunks
calls = call_chunks
__all__ = ["ChunkModel", "Gate", "calls", "echo_tool", "make_agent", "reload", "sleep_tool", "text", "types"]


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
