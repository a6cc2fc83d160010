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
from typing import Any

from ..errors import DshError
from ..redaction import redact
from ..wire.base import tag
from ..wire.codes import received
from .cells import Part, clip, image_bytes
from .kernels import KernelLink
from .pages import LabPages

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

    client: dict[str, Any]
    mcp_session_id: str | None
    progress: Progress
    pages: LabPages | None = None  # the JupyterLab pages: a banner above the notebook while a person decides


@dataclass
class Outcome:
    """What a tool's body returns: its parts, facts for the log, whether it failed."""

    parts: list[Part] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    error: DshError | None = None


class ExternalCallRun:
    """begin → body → end for one call on one notebook's session."""

    def __init__(self, link: KernelLink, ctx: CallContext, tool: str, arguments: dict[str, Any], notebook: str,
                 file_path: str | None) -> None:
        self.link, self.ctx, self.tool = link, ctx, tool
        self.arguments, self.notebook, self.file_path = arguments, notebook, file_path
        self.call_id = "x" + uuid.uuid4().hex[:12]
        self.session_id = ""

    async def run(self, body: Callable[[ExternalCallRun], Awaitable[Outcome]]) -> tuple[list[Part], DshError | None]:
        await self.ctx.progress.say("opening the notebook's session")
        nb = await self.link.guard(self.link.call("notebook"))
        self.session_id = str(nb["sessionId"])
        begin = {"sessionId": self.session_id, "callId": self.call_id, "tool": self.tool,
                 "arguments": json.dumps(self.arguments, ensure_ascii=False), "client": self.ctx.client,
                 "mcpSessionId": self.ctx.mcp_session_id, "notebook": self.notebook, "filePath": self.file_path}
        watch = asyncio.ensure_future(self._watch_decision())
        try:
            begun = await self.link.guard(self.link.wire.rpc("external/begin", begin))
        except asyncio.CancelledError:  # the client gave up while a person or a turn was awaited
            self._cancelled("while it waited to be decided")
            raise
        finally:
            watch.cancel()
            if self.ctx.pages is not None:
                self.ctx.pages.settled(self.call_id)
        if not begun.get("allowed"):
            return [], DshError(f"{begun.get('reason') or 'denied'} (session {self.session_id}, mode "
                                f"{begun.get('mode')})", code=received(str(begun.get("code") or "DENIED")))
        try:
            outcome = await body(self)
        except DshError as exc:
            outcome = Outcome(error=exc)
        except asyncio.CancelledError:
            self._cancelled("while it ran")
            raise
        ended = await self._end(outcome)
        texts = iter(p.get("text", "") for p in ended.get("content", []) if tag(p) == "text")
        masked = [Part("text", next(texts, "")) if p.kind == "text" else p for p in outcome.parts]
        return masked, outcome.error

    def _banner(self) -> dict[str, Any]:
        """What the banner above the notebook says of this call (masked, as the log has it)."""
        what = self.arguments.get("code") if self.tool == "execute_code" else self.arguments.get("source")
        return {"tool": self.tool, "client": self.ctx.client, "sessionId": self.session_id,
                "text": redact(clip(str(what), 4000)) if isinstance(what, str) else None}

    async def _approve(self, decision: str) -> None:
        """A person's answer in the banner: ``session/approve``, as the widget's buttons send it."""
        await self.link.wire.rpc("session/approve", {"sessionId": self.session_id, "callId": self.call_id,
                                                     "decision": decision}, timeout=30)

    def _cancelled(self, when: str) -> None:
        """The MCP client cancelled the call: say so to the host now (a cancelled task cannot wait
        for the answer) — its external turn ends ``aborted``, an approval still asked is withdrawn."""
        message = f"the MCP client cancelled the call {when}"
        self.link.wire.post("external/end", {
            "sessionId": self.session_id, "callId": self.call_id, "isError": True,
            "content": [{"type": "text", "text": f"[CANCELLED] {message}"}],
            "error": {"code": "CANCELLED", "message": message}})

    async def _end(self, outcome: Outcome) -> dict[str, Any]:
        content = [{"type": "text", "text": p.text} if p.kind == "text"
                   else {"type": "image", "mimeType": p.mime, "bytes": image_bytes(p)} for p in outcome.parts]
        error = outcome.error
        if error is not None:
            content.append({"type": "text", "text": f"[{error.code}] {error.message}"})
        args: dict[str, Any] = {"sessionId": self.session_id, "callId": self.call_id, "content": content,
                                "isError": error is not None, "meta": outcome.meta}
        if error is not None:
            args["error"] = {"code": error.code, "message": error.message}
        return await self.link.guard(self.link.wire.rpc("external/end", {k: v for k, v in args.items() if v is not None}))

    async def _watch_decision(self) -> None:
        """Progress while ``external/begin`` waits: the in-kernel agent's turn, then a person."""
        while True:
            await asyncio.sleep(1.0)
            try:
                info = await self.link.wire.rpc("session/info", {"sessionId": self.session_id}, timeout=10)
            except (DshError, asyncio.TimeoutError):
                continue
            waiting = [a for a in info.get("pendingApprovals", []) if a.get("callId") == self.call_id]
            if waiting and self.ctx.pages is not None:
                self.ctx.pages.asking(self.call_id, self.notebook, self._banner(), self._approve)
            if waiting:
                await self.ctx.progress.say(f"waiting for a person to approve {self.tool} ({self.call_id}) in the "
                                            f"notebook (session {self.session_id}, mode {info.get('mode')})")
            elif info.get("status") == "running":
                await self.ctx.progress.say("waiting for the in-kernel agent's turn to end (the notebook's session is busy)")
