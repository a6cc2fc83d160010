"""One external call, from the MCP request to the session's events (issue 41).

:class:`ExternalCallRun` is the frame every notebook tool runs in: find the notebook's kernel,
make sure its ``dsh.external`` comm is open, ask for the notebook's session, ``external/begin``
(logged, decided — a person may be asked in the notebook; meanwhile the MCP client gets progress
notifications saying so, at most one a second, and a heartbeat every 30 s), run the tool's body,
``external/end`` (the result logged, masked — and that masked text is what the client gets).
A refusal or a failure is a result too, coded: ``[CODE] message`` as the text, the same in
``structuredContent.error``, ``isError`` set.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

from ..errors import DshError
from ..redaction import redact
from ..wire.endpoints import ApproveArgs, Decided, SessionInfo, SessionRef
from ..wire.events import ErrorInfo, ExternalClient, ExternalContent
from ..wire.external import (
    ExternalBeginArgs,
    ExternalBegun,
    ExternalEndArgs,
    ExternalEnded,
    ExternalTool,
)
from ..wire.external_pages import ApprovalShown
from .cells import Part, clip, image_bytes
from .kernels import KernelLink
from .pages import LabPages
from .wirelink import build

HEARTBEAT = 30.0
"""Seconds between two progress notifications while nothing changes (clients with idle timeouts
— Claude Code drops a call idle for 5 minutes — keep waiting)."""


class Progress:
    """Progress notifications of one MCP request: at most one a second, a heartbeat otherwise."""

    def __init__(self, report: Callable[[float, str], Awaitable[None]], heartbeat: float = HEARTBEAT,
                 min_gap: float = 1.0) -> None:
        self.report, self.heartbeat, self.min_gap = report, heartbeat, min_gap
        self.count = 0
        self.message = "started"
        self._last = 0.0
        self._said = ""
        self._task: asyncio.Task[None] | None = None
        self.sent: list[str] = []

    async def say(self, message: str) -> None:
        """Say ``message`` now, unless something was said less than ``min_gap`` ago (then the
        heartbeat loop says the latest soon)."""
        self.message = message
        if time.monotonic() - self._last >= self.min_gap and message != self._said:
            await self._send()

    async def _send(self) -> None:
        self.count += 1
        self._last, self._said = time.monotonic(), self.message
        self.sent.append(self.message)
        try:
            await self.report(float(self.count), self.message)
        except Exception:  # a client that went away: the call still ends properly
            pass

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.min_gap)
            idle = time.monotonic() - self._last
            if (self.message != self._said and idle >= self.min_gap) or idle >= self.heartbeat:
                await self._send()

    def __enter__(self) -> Progress:
        self._task = asyncio.ensure_future(self._loop())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


@dataclass
class CallContext:
    """Who calls: the MCP client and session."""

    client: ExternalClient
    mcp_session_id: str | None
    progress: Progress
    pages: LabPages | None = None  # the JupyterLab pages: a banner above the notebook while a person decides


@dataclass
class Outcome:
    """What a tool's body returns: its parts, facts for the log, whether it failed."""

    parts: list[Part] = field(default_factory=list)
    meta: dict[str, JsonValue] | None = None
    error: DshError | None = None


class ExternalCallRun:
    """begin → body → end for one call on one notebook's session."""

    def __init__(self, link: KernelLink, ctx: CallContext, tool: ExternalTool, arguments: dict[str, JsonValue],
                 notebook: str, file_path: str | None) -> None:
        self.link, self.ctx, self.tool = link, ctx, tool
        self.arguments, self.notebook, self.file_path = arguments, notebook, file_path
        self.call_id = "x" + uuid.uuid4().hex[:12]
        self.session_id = ""

    async def run(self, body: Callable[[ExternalCallRun], Awaitable[Outcome]]) -> tuple[list[Part], DshError | None]:
        await self.ctx.progress.say("opening the notebook's session")
        nb = await self.link.guard(self.link.notebook_session())
        self.session_id = nb.session_id
        begin = build(ExternalBeginArgs, session_id=self.session_id, call_id=self.call_id, tool=self.tool,
                      arguments=json.dumps(self.arguments, ensure_ascii=False), client=self.ctx.client,
                      mcp_session_id=self.ctx.mcp_session_id, notebook=self.notebook, file_path=self.file_path)
        watch = asyncio.ensure_future(self._watch_decision())
        try:
            begun = await self.link.guard(self.link.wire.rpc("external/begin", begin, ExternalBegun))
        except asyncio.CancelledError:  # the client gave up while a person or a turn was awaited
            self._cancelled("while it waited to be decided")
            raise
        finally:
            watch.cancel()
            if self.ctx.pages is not None:
                self.ctx.pages.settled(self.call_id)
        if not begun.allowed:
            return [], DshError(f"{begun.reason or 'denied'} (session {self.session_id}, mode {begun.mode})",
                                code=begun.code or "DENIED")
        try:
            outcome = await body(self)
        except DshError as exc:
            outcome = Outcome(error=exc)
        except asyncio.CancelledError:
            self._cancelled("while it ran")
            raise
        ended = await self._end(outcome)
        texts = iter(p.text or "" for p in ended.content if p.type == "text")
        masked = [Part("text", next(texts, "")) if p.kind == "text" else p for p in outcome.parts]
        return masked, outcome.error

    def _banner(self) -> ApprovalShown:
        """What the banner above the notebook says of this call (masked, as the log has it)."""
        what = self.arguments.get("code") if self.tool == "execute_code" else self.arguments.get("source")
        return ApprovalShown(call_id=self.call_id, path=self.notebook, tool=self.tool, client=self.ctx.client,
                             session_id=self.session_id,
                             text=redact(clip(what, 4000)) if isinstance(what, str) else None)

    async def _approve(self, decision: Literal["allow", "deny"]) -> None:
        """A person's answer in the banner: ``session/approve``, as the widget's buttons send it."""
        await self.link.wire.rpc("session/approve", ApproveArgs(session_id=self.session_id, call_id=self.call_id,
                                                                decision=decision), Decided, timeout=30)

    def _cancelled(self, when: str) -> None:
        """The MCP client cancelled the call: say so to the host now (a cancelled task cannot wait
        for the answer) — its external turn ends ``aborted``, an approval still asked is withdrawn."""
        message = f"the MCP client cancelled the call {when}"
        self.link.wire.post("external/end", ExternalEndArgs(
            session_id=self.session_id, call_id=self.call_id, is_error=True,
            content=(ExternalContent(type="text", text=f"[CANCELLED] {message}"),),
            error=ErrorInfo(code="CANCELLED", message=message)))

    async def _end(self, outcome: Outcome) -> ExternalEnded:
        content = [ExternalContent(type="text", text=p.text) if p.kind == "text"
                   else ExternalContent(type="image", mime_type=p.mime, bytes=image_bytes(p)) for p in outcome.parts]
        error = outcome.error
        if error is not None:
            content.append(ExternalContent(type="text", text=f"[{error.code}] {error.message}"))
        args = build(ExternalEndArgs, session_id=self.session_id, call_id=self.call_id, content=tuple(content),
                     is_error=error is not None, meta=outcome.meta,
                     error=ErrorInfo(code=error.code, message=error.message) if error is not None else None)
        return await self.link.guard(self.link.wire.rpc("external/end", args, ExternalEnded))

    async def _watch_decision(self) -> None:
        """Progress while ``external/begin`` waits: the in-kernel agent's turn, then a person."""
        while True:
            await asyncio.sleep(1.0)
            try:
                info = await self.link.wire.rpc("session/info", SessionRef(session_id=self.session_id), SessionInfo,
                                                timeout=10)
            except (DshError, asyncio.TimeoutError):
                continue
            waiting = [a for a in info.pending_approvals if a.call_id == self.call_id]
            if waiting and self.ctx.pages is not None:
                self.ctx.pages.asking(self._banner(), self._approve)
            if waiting:
                await self.ctx.progress.say(f"waiting for a person to approve {self.tool} ({self.call_id}) in the "
                                            f"notebook (session {self.session_id}, mode {info.mode})")
            elif info.status == "running":
                await self.ctx.progress.say("waiting for the in-kernel agent's turn to end (the notebook's session is busy)")
