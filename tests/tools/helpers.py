"""Helpers for the tool tests: tool-call blocks, a frame recorder, small gated test tools."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from dsh_notebook.session import ToolCallBlock
from dsh_notebook.tools import Tool, ToolContext, ToolOutput


def call(name: str, args: dict[str, Any] | str | None = None, call_id: str = "c1") -> ToolCallBlock:
    """A tool-call block as the model would produce it (``args`` str = raw JSON text)."""
    raw = args if isinstance(args, str) else json.dumps(args or {})
    return ToolCallBlock(id=call_id, name=name, arguments=raw)


class Frames(list[dict[str, Any]]):
    """A live sink that records ``tool-runtime`` frames."""

    def __call__(self, frame: dict[str, Any]) -> None:
        self.append(frame)

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

    def gate(self, key: str) -> asyncio.Event:
        return self.events.setdefault(key, asyncio.Event())

    def open(self, key: str) -> None:
        self.gate(key).set()

    async def wait_started(self, *keys: str) -> None:
        while not all(k in self.started for k in keys):
            await asyncio.sleep(0)

    async def body(self, args: KeyArgs, ctx: ToolContext) -> ToolOutput:
        self.started.append(args.key)
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
