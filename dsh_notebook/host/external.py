"""External agents' calls on the host (issue 41): ``external/begin`` and ``external/end``.

The MCP server in the Jupyter Server process (:mod:`dsh_notebook.external`) cannot write a
session: the session of a notebook lives here, in the notebook's kernel, with its one writer. So
it asks this service, over the kernel's ``dsh.external`` comm, to log each call and decide it:

- a **read** (``read_notebook``, ``inspect_var``, ``session_events``, ``list_notebooks``) and
  ``ask_agent`` (whose own tool calls the agent decides one by one) are logged —
  ``external/call``, later ``external/result`` — and run at once (a deny rule still refuses them);
- a call that **executes or writes** (``execute_code``; ``insert_cell`` / ``edit_cell``, an edit
  of the notebook file) runs in an **external turn**: once no turn of the agent runs (prompts
  submitted meanwhile queue behind it), ``turn/start``, ``external/call``, the decision of the
  session's permission mode and rules (:func:`dsh_notebook.tools.policy.decide`, the one the
  agent's tools go through: ``approval/decided``, or ``approval/asked`` and a person's answer in
  the notebook's approval banner), ``checkpoint/taken`` when it may run, then — when the server
  reports the result — ``external/result``, ``checkpoint/changes`` and ``turn/end``. ``%dsh undo``
  rewinds that turn like any other; ``%dsh stop`` ends it ``aborted``.

Arguments and results are masked (:mod:`dsh_notebook.redaction`) before they are logged; the
masked result is what the external agent gets back. Host loop only.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import HostError
from ..redaction import redact, redact_json_text
from ..tools import policy
from ..tools.base import Subject, Tool, ToolContext, ToolOutput, argument, whole_arguments
from ..tools.outcome import ToolInvocation
from ..wire.codes import received
from ..wire.events import ErrorInfo as EventError
from ..wire.events import (
    ExternalCall,
    ExternalContent,
    ExternalResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
)
from ..wire.external import ExternalBeginArgs, ExternalBegun, ExternalEndArgs, ExternalEnded
from ..wire.messages import ToolCallBlock
from .gateway import GatewayInvocation
from .registry import AgentRegistry, LiveSession


class _ExternalArgs(BaseModel):
    """An external call's arguments as the policy reads them (``file_path``: the notebook file)."""

    model_config = ConfigDict(extra="allow")
    file_path: str | None = None
    code: str | None = None


async def _never(args: BaseModel, ctx: ToolContext) -> ToolOutput:  # the server runs external calls
    raise HostError("an external call runs in the Jupyter Server process", code="INTERNAL")


def _tool(name: str, effect: Any, approval: Any = "allow", subject: Subject = whole_arguments) -> Tool:
    return Tool(name=name, description=f"the external agents' {name}", args_model=_ExternalArgs, execute=_never,
                approval=approval, effect=effect, subject=subject)


TOOLS: dict[str, Tool] = {
    "list_notebooks": _tool("list_notebooks", "read"),
    "read_notebook": _tool("read_notebook", "read"),
    "inspect_var": _tool("inspect_var", "read"),
    "session_events": _tool("session_events", "read"),
    "ask_agent": _tool("ask_agent", None),  # the agent decides each of its own calls
    "execute_code": _tool("execute_code", "execute", "ask", argument("code")),
    "insert_cell": _tool("insert_cell", "edit", "ask", argument("path")),
    "edit_cell": _tool("edit_cell", "edit", "ask", argument("path")),
}
"""Each external tool as the policy sees it: what it does for the modes (``execute`` asks in
``default`` and ``accept-edits``; a cell edit is an ``edit`` of the notebook file: it runs in
``accept-edits`` when the file is inside the workspace) and what a rule's pattern matches (the
code of ``execute_code``, the notebook's path of a cell edit, else the arguments)."""

WRITES = frozenset(name for name, tool in TOOLS.items() if tool.effect in ("execute", "edit"))


@dataclass
class _Pending:
    """One external call between ``begin`` and ``end``."""

    live: LiveSession
    call_id: str
    call_seq: int
    tool: str
    by: str
    turn: int | None = None
    begun: asyncio.Future[ExternalBegun] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    result: asyncio.Future[ExternalEndArgs] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    ended: asyncio.Future[ExternalEnded] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    task: asyncio.Task[None] | None = None
    deciding: asyncio.Task[Any] | None = None  # ``begin`` while it has not answered (queued, or deciding)
    cancelled: ExternalEndArgs | None = None  # the client's CANCELLED end, when it came before the decision


def masked_content(parts: tuple[ExternalContent, ...]) -> tuple[ExternalContent, ...]:
    """Texts masked; an image keeps its type and size only (never its bytes in the log)."""
    out = []
    for p in parts:
        if p.type == "text":
            out.append(ExternalContent(type="text", text=redact(p.text or "")))
        else:
            out.append(ExternalContent(type="image", mime_type=p.mime_type, bytes=p.bytes))
    return tuple(out)


class ExternalCalls:
    """The ``externalCalls`` service of the host's Gateway."""

    def __init__(self, registry: AgentRegistry) -> None:
        self.registry = registry
        self.pending: dict[str, _Pending] = {}
        self._ended_early: deque[str] = deque(maxlen=256)  # cancelled by their client before their begin ran

    async def begin(self, args: ExternalBeginArgs, inv: GatewayInvocation) -> ExternalBegun:
        live, how = await self.registry.resolve(args.session_id, by=inv.caller)
        inv.note("resolver", how)
        if args.call_id in self.pending:
            raise HostError(f"external call {args.call_id} is already under way", code="REQUEST_CONFLICT")
        if args.call_id in self._ended_early:
            raise HostError(f"external call {args.call_id} was cancelled by its client", code="EXTERNAL_CALL_ENDED")
        pending = _Pending(live, args.call_id, -1, args.tool, inv.caller, deciding=asyncio.current_task())
        self.pending[args.call_id] = pending
        try:
            if args.tool in WRITES:
                pending.task = await live.agent.outside_turn(lambda: self._turn(live, args, pending),
                                                             name=f"dsh-external:{args.call_id}")
                return await asyncio.shield(pending.begun)
            return await self._read(live, args, pending)
        except BaseException:
            if pending.task is None or pending.task.done():  # a turn still waiting goes on (it ends itself)
                self.pending.pop(args.call_id, None)
                if pending.task is None and pending.cancelled is not None and pending.call_seq >= 0:
                    await self._log_result(pending, pending.cancelled)  # a read cancelled while it was decided
            raise
        finally:
            pending.deciding = None

    async def end(self, args: ExternalEndArgs, inv: GatewayInvocation) -> ExternalEnded:
        pending = self.pending.get(args.call_id)
        cancel = args.error is not None and args.error.code == "CANCELLED"
        if pending is None and cancel:
            self._ended_early.append(args.call_id)
        if pending is None or pending.live.id != args.session_id:
            raise HostError(f"external call {args.call_id} is not under way in session {args.session_id} "
                            "(it ended: %dsh stop, a refusal, or a restart of the kernel)", code="EXTERNAL_CALL_ENDED")
        if pending.result.done():
            raise HostError(f"external call {args.call_id} has its result already", code="REQUEST_CONFLICT")
        if cancel and pending.deciding is not None:  # cancelled while queued or awaiting a decision
            pending.cancelled = args
            if pending.task is not None:
                pending.task.cancel()  # its turn ends aborted (cause client), the approval withdrawn
            pending.deciding.cancel()
            raise HostError(f"external call {args.call_id} was cancelled by its client before it ran",
                            code="EXTERNAL_CALL_ENDED")
        if pending.task is None:  # a read: log its result now
            self.pending.pop(args.call_id, None)
            return await self._log_result(pending, args)
        pending.result.set_result(args)
        ended = await asyncio.shield(pending.ended)
        if pending.task is not None:  # answered once its external turn is over (turn/end logged, the
            await asyncio.wait({pending.task})  # session idle): a %dsh undo right after it finds it ended
        return ended

    def abandon(self, caller: str) -> int:
        """The server that made calls as ``caller`` is gone (its comm closed): end their external
        turns (``aborted``, cause ``disconnected``) and forget its reads. How many ended."""
        mine = [(cid, p) for cid, p in self.pending.items() if p.by == caller]
        for cid, p in mine:
            if p.task is not None and not p.task.done():
                p.live.agent.cancel_cause = p.live.agent.cancel_cause or "disconnected"
                p.task.cancel()
            elif p.task is None:
                self.pending.pop(cid, None)
        return len(mine)

    # -- reads ---------------------------------------------------------------------------------
    async def _read(self, live: LiveSession, args: ExternalBeginArgs, pending: _Pending) -> ExternalBegun:
        pending.call_seq = self._log_call(live, args, None)
        verdict = await self._decide(live, args)
        if verdict.decision != "allow":
            self.pending.pop(args.call_id, None)
            return await self._refused(live, args, pending, verdict.reason)
        return ExternalBegun(session_id=live.id, call_id=args.call_id, seq=pending.call_seq, allowed=True,
                             mode=live.mode)

    # -- an external turn ----------------------------------------------------------------------
    async def _turn(self, live: LiveSession, args: ExternalBeginArgs, pending: _Pending) -> None:
        agent, session = live.agent, live.session
        agent.last_turn += 1
        turn = pending.turn = agent.last_turn
        agent.cancel_cause = None
        agent.current_turn, agent.current_step = turn, 0
        session.append(TurnStart(turn=turn))
        reason = TurnEndReason(kind="completed")
        checkpointed = False
        try:
            pending.call_seq = self._log_call(live, args, turn)
            verdict = await self._decide(live, args)
            if verdict.decision != "allow":
                refused = await self._refused(live, args, pending, verdict.reason)
                reason = TurnEndReason(kind="blocked", cause=refused.reason)
                pending.begun.set_result(refused)
                return
            if live.checkpoints is not None:
                await live.checkpoints.begin(turn)  # before anything of the call runs
                checkpointed = True
            pending.begun.set_result(ExternalBegun(session_id=live.id, call_id=args.call_id, seq=pending.call_seq,
                                                   allowed=True, turn=turn, mode=live.mode))
            result = await pending.result
            if result.error is not None and result.error.code == "CANCELLED":  # the client gave up as it ran
                reason = TurnEndReason(kind="aborted", cause="client")
            pending.ended.set_result(await self._log_result(pending, result))
        except asyncio.CancelledError:
            cause = "client" if pending.cancelled is not None else agent.cancel_cause or "cancelled"
            reason = TurnEndReason(kind="aborted", cause=cause)
            error = EventError(code="CANCELLED", message=f"the external turn was stopped in the notebook ({cause})")
            if pending.cancelled is not None:
                self._append_result(pending, pending.cancelled)
            else:
                self._log_error(pending, error, turn)
            for fut in (pending.begun, pending.ended):
                if not fut.done():
                    fut.set_exception(HostError(error.message, code="EXTERNAL_CALL_ENDED"))
                    fut.exception()  # retrieved (nobody may wait on it any more)
        except Exception as exc:
            reason = TurnEndReason(kind="error", error=EventError(code=getattr(exc, "code", "INTERNAL"),
                                                                  message=redact(str(exc))))
            for fut in (pending.begun, pending.ended):
                if not fut.done():
                    fut.set_exception(exc)
                    fut.exception()
        finally:
            self.pending.pop(args.call_id, None)
            if checkpointed and live.checkpoints is not None:
                await live.checkpoints.end(turn)
            session.append(TurnEnd(turn=turn, reason=reason))
            await agent.flush_quietly("an external turn's end")

    # -- the decision --------------------------------------------------------------------------
    async def _decide(self, live: LiveSession, args: ExternalBeginArgs) -> Any:
        tool = TOOLS[args.tool]
        try:
            raw = json.loads(args.arguments)
        except ValueError:
            raw = {}
        data = raw if isinstance(raw, dict) else {}
        parsed = _ExternalArgs.model_validate({**data, "file_path": args.file_path})
        runtime = live.agent.toolset.runtime()
        block = ToolCallBlock(id=args.call_id, name=args.tool, arguments=args.arguments)
        inv = ToolInvocation(args.call_id, args.tool, args.arguments, parsed, tool, live.id)
        return await policy.decide(runtime, block, inv)

    async def _refused(self, live: LiveSession, args: ExternalBeginArgs, pending: _Pending,
                       why: str | None) -> ExternalBegun:
        reason = redact(why or "denied")
        self._log_error(pending, EventError(code="DENIED", message=reason), pending.turn)
        await live.agent.flush_quietly("an external call's refusal")
        return ExternalBegun(session_id=live.id, call_id=args.call_id, seq=pending.call_seq, allowed=False,
                             turn=pending.turn, mode=live.mode, code="DENIED", reason=reason)

    # -- the events ----------------------------------------------------------------------------
    @staticmethod
    def _log_call(live: LiveSession, args: ExternalBeginArgs, turn: int | None) -> int:
        event = ExternalCall(call_id=args.call_id, tool=args.tool, arguments=redact_json_text(args.arguments),
                             client=args.client, mcp_session_id=args.mcp_session_id, notebook=args.notebook, turn=turn)
        return live.session.append(event).seq

    async def _log_result(self, pending: _Pending, args: ExternalEndArgs) -> ExternalEnded:
        event = self._append_result(pending, args)
        if pending.task is None:
            await pending.live.agent.flush_quietly("an external call's result")
        return ExternalEnded(session_id=pending.live.id, call_id=args.call_id, seq=event.seq, content=event.content)

    @staticmethod
    def _append_result(pending: _Pending, args: ExternalEndArgs) -> ExternalResult:
        content = masked_content(args.content)
        error = EventError(code=received(args.error.code), message=redact(args.error.message)) if args.error else None
        event = ExternalResult(
            call_id=args.call_id, tool=pending.tool, content=content, is_error=args.is_error or error is not None,
            error=error, turn=pending.turn, meta=args.meta, source_event_seqs=(pending.call_seq,))
        return pending.live.session.append(event)

    @staticmethod
    def _log_error(pending: _Pending, error: EventError, turn: int | None) -> None:
        if pending.call_seq < 0:
            return
        pending.live.session.append(ExternalResult(
            call_id=pending.call_id, tool=pending.tool, content=(ExternalContent(type="text", text=f"[{error.code}] {error.message}"),),
            is_error=True, error=error, turn=turn, source_event_seqs=(pending.call_seq,)))
