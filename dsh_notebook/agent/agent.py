"""The Agent (seed 001 L5–L7): Turn and Step, the model → tools → model loop.

A **turn** is one task round: ``turn/start`` … ``turn/end{reason}`` (always written, in a
``finally``). A **step** is one model call (with retries inside) and its tool batch:
``step/start`` → entered user messages (first attempt only) → ``request/frozen`` → the stream →
``assistant/message`` (or ``assistant/attempt``) → ``tool/call``/``tool/result`` → ``step/end``.

Before each step, ``_pre_step`` claims input from the Inbox, assembles the prompt from the
agent's Scope, projects the runtime context and runs the ``agent/pre-step`` waterfall (which may
rewrite or reject). The turn ends by *data*: the last step had no tool calls (or a tool concluded
the turn) **and** the next-step inbox is still empty after ``agent/turn-stopping``. End reasons:
``completed``, ``aborted{cause}``, ``blocked{cause}``, ``error{error}``, ``max-tokens`` (sticky),
``budget{cause, limit}``.

Turn budgets: ``max_steps`` (model requests per turn; checked before a further step starts, so a
model that calls tools forever is stopped after exactly ``max_steps`` requests, its last batch
answered) and ``max_time`` (seconds per turn; when it runs out the turn is cancelled like an
abort — running tools stopped, every call answered — and ends ``budget{cause: "max-time"}``).
Context management (:mod:`.compactor`): before a step's first attempt the request is estimated
against the model's window and compacted above the threshold; a ``CONTEXT_OVERFLOW`` answer
compacts and retries the request once.

The driver is an asyncio task on the loop the agent is used from (the host's loop thread);
``followup``/``steer``/``inject``/``cancel`` must be called on that loop's thread.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from ..context import HarnessContext
from ..errors import LogWriteError, ModelError, SessionError, UserError
from ..models.base import ModelAdapter, ModelRequest
from ..session.session import Session
from ..tools.base import ApprovalMode, Approver, AutoApprover
from ..tools.registry import ToolRegistry, builtin_tools
from ..tools.rules import ApprovalPolicy
from ..tools.runtime import ToolRuntime
from ..tools.scheduler import ArgumentsEdited, ToolBatch, execute_tool_calls
from ..wire.base import dump
from ..wire.control import AgentStatus
from ..wire.events import (
    AssistantMessageEvent,
    ContextCompacted,
    LlmRetry,
    ReplaceOp,
    StepEnd,
    StepStart,
    TurnEnd,
    TurnEndReason,
    TurnStart,
)
from ..wire.follow import FollowStatus, FrameSink, RunFrame
from ..wire.messages import ToolCallBlock, UserMessage, user_text
from .compactor import Compactor
from .debugger import Debugger
from .hooks import COMPLETED, MAX_TOKENS, PreStep, ToolHookBridge, TurnStopping, error_info
from .inbox import Inbox, Target
from .projections import RuntimeContextProjection, SystemPromptProjection
from .prompt import PromptAssembly, PromptEnv, collect_assembly
from .request import RequestBuilder, prepare_request
from .stream import run_attempt

log = logging.getLogger(__name__)
_TIME_UP = "budget:max-time"  # the cancel cause of a turn whose time budget ran out


class Agent:
    """Coordinates the model–tool loop of one session (seed 001 object 22)."""

    def __init__(
        self,
        session: Session,
        *,
        adapter_for: Callable[[str], ModelAdapter],
        model: str,
        tools: ToolRegistry | None = None,
        runtime_factory: Callable[[Agent], ToolRuntime] | None = None,
        approver: Approver | None = None,
        policy_mode: ApprovalMode = "auto",
        context: HarnessContext | None = None,
        frames: FrameSink | None = None,
        flush: Callable[[], None] | None = None,
        max_retries: int = 3,
        retry_base_ms: int = 500,
        retry_cap_ms: int = 30_000,
        config: Mapping[str, Any] | None = None,
        max_parallel: int = 10,
        max_steps: int | None = None,
        max_time: float | None = None,
        approval_policy: ApprovalPolicy | None = None,
        context_window: int | None = None,
        compact_threshold: float = 0.8,
    ) -> None:
        """Build the agent of ``session`` (fresh or resumed: inbox, projections and the turn
        counter are restored from its log). ``adapter_for(model_id)`` routes a model id to an
        adapter (cached per id); ``tools`` defaults to the built-ins; tool batches run through
        ``runtime_factory(agent)`` or a default ``ToolRuntime(approver, policy_mode)``, rebuilt
        only when the tools, scope or policy change. ``context`` is the host's (global) context:
        the agent lives in a child ``agent:<id>`` (``agent.context``) whose Scope decides what it
        sees. ``frames`` gets the transient frames; ``flush`` makes the log durable (called before
        every model request and at every turn end). Retries: ``max_retries`` extra attempts,
        delay ``retry_base_ms·2^(n-1)`` or the provider's ``retry_after_ms``, capped. Budgets:
        ``max_steps`` / ``max_time`` per turn (``None``: unbounded); read at each turn's start."""
        self.session = session
        self.adapter_for = adapter_for
        self.model = model
        self.tools = tools if tools is not None else ToolRegistry(builtin_tools())
        self.runtime_factory = runtime_factory
        self.approver: Approver = approver or AutoApprover()
        self.policy_mode: ApprovalMode = policy_mode
        self.context = (context or HarnessContext("host")).child(f"agent:{session.id}")
        self.context.provide("agent", self)
        self.scope = self.context.scope()
        self.frames = frames
        self.flush = flush
        self.max_retries, self.retry_base_ms, self.retry_cap_ms = max_retries, retry_base_ms, retry_cap_ms
        self.config: dict[str, Any] = dict(config or {})
        self.max_parallel = max_parallel
        self.max_steps, self.max_time = max_steps, max_time
        self.approval_policy = approval_policy  # rules / grants / callables, first pre-execute hook
        self.compactor = Compactor(session, threshold=compact_threshold, window_override=context_window)
        self.inbox = Inbox.restore(session, wake=self._wake)
        self.runtime_context = RuntimeContextProjection(session)
        self.system_prompt = SystemPromptProjection(session)
        self.requests = RequestBuilder(session)  # the agent flushes, off the loop (_durable)
        self.debugger = Debugger(session, emit=self._emit, durable=lambda: self.flush_quietly("a debugger pause"))
        self._batch_tools: tuple[str, ...] = ()  # the tools of the last batch (debugger 05/06)
        self.last_assembly: PromptAssembly | None = None
        self.status: AgentStatus = "idle"
        self.current_turn: int | None = None
        self.current_step: int | None = None
        self._last_turn = max((e.turn for e in session.events if isinstance(e, TurnStart)), default=0)
        self._adapters: dict[str, ModelAdapter] = {}
        self._hooks = ToolHookBridge(self.scope)
        self._runtime_cache: tuple[tuple[Any, ...], ToolRuntime] | None = None
        self._status_fns: list[Callable[[AgentStatus], None]] = []
        self._driver: asyncio.Task[None] | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._wake_requested = False
        self._cancel_cause: str | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    # -- input (host-loop thread only) --------------------------------------------------------
    def followup(self, message: UserMessage | str) -> None:
        """Queue ``message`` as the prompt of a coming turn and wake the driver."""
        self.inbox.followup(_msg(message))

    def steer(self, message: UserMessage | str) -> None:
        """Add ``message`` to the running turn's next step (or start a turn) and wake."""
        if self._cancel_cause is not None:  # the running turn is being aborted: queue it instead
            self.inbox.followup(_msg(message))
        else:
            self.inbox.steer(_msg(message))

    def inject(self, message: UserMessage | str) -> None:
        """Add context for the next step without waking the driver."""
        self.inbox.inject(_msg(message))

    def kick(self) -> bool:
        """Start a turn for input that is already pending (e.g. restored on resume)."""
        if self.inbox.next_turn or self.inbox.next_step:
            self._wake()
            return True
        return False

    # -- control ------------------------------------------------------------------------------
    async def cancel(self, cause: str = "user", *, keep_inbox: bool = False) -> bool:
        """Abort the running turn (every call answered; ``turn/end`` aborted). ``False`` if idle."""
        if not keep_inbox:
            self.inbox.clear()
        task = self._turn_task
        if task is None or task.done():
            return False
        if self._cancel_cause is None:
            self._cancel_cause = cause  # the first cause wins
        task.cancel()
        await asyncio.wait({task})
        return True

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def on_status(self, fn: Callable[[AgentStatus], None]) -> Callable[[], None]:
        """Call ``fn(status)`` whenever the status changes. Returns an unsubscribe function."""
        self._status_fns.append(fn)
        return lambda: self._status_fns.remove(fn) if fn in self._status_fns else None

    async def close(self) -> None:
        """Cancel any running turn (cause ``shutdown``), close the adapters, dispose the context."""
        await self.cancel("shutdown", keep_inbox=True)
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()
            await asyncio.wait({self._driver})
        adapters, self._adapters = list(self._adapters.values()), {}
        for adapter in adapters:
            try:
                await adapter.aclose()
            except Exception:
                log.exception("closing the %s adapter failed", adapter.provider)
        self.context.dispose()

    def describe(self) -> dict[str, Any]:
        """What a learner sees of the agent: status, turn/step, inbox, scope, last request."""
        frozen = self.requests.last_frozen
        return {
            "session": self.session.id,
            "model": self.model,
            "status": self.status,
            "turn": self.current_turn,
            "step": self.current_step,
            "inbox": [dump(i) for i in self.inbox.items()],
            "scope": self.scope.describe(),
            "tools": list(self.tools.names),
            "systemPromptOp": self.system_prompt.last_op,
            "lastRequestSeq": frozen.seq if frozen else None,
        }

    # -- driver -------------------------------------------------------------------------------
    def _wake(self) -> None:
        if self._driver is not None and not self._driver.done():
            self._wake_requested = True
            return
        loop = asyncio.get_running_loop()
        self._idle.clear()
        self._set_status("running")
        self._driver = loop.create_task(self._drive(), name=f"dsh-agent:{self.session.id}")

    async def _drive(self) -> None:
        try:
            first = True
            while first or self._more_work():
                first, self._wake_requested = False, False
                task = asyncio.get_running_loop().create_task(self._turn())
                self._turn_task = task
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    task.cancel()
                    await asyncio.wait({task})
                    raise
        finally:
            self._turn_task = None
            self.current_turn = self.current_step = None
            self._set_status("idle")
            self._idle.set()

    def _more_work(self) -> bool:
        """Whether the driver starts another turn when this one ends."""
        return bool(self.inbox.next_turn or (self._wake_requested and self.inbox.next_step))

    def _set_status(self, status: AgentStatus) -> None:
        changed = status != self.status
        self.status = status
        if self.frames is not None:
            self._emit(FollowStatus.model_construct(status=status, turn=self.current_turn, step=self.current_step))
        if changed:
            for fn in list(self._status_fns):
                try:
                    fn(status)
                except Exception:
                    log.exception("status listener failed")

    def _emit(self, frame: RunFrame) -> None:
        if self.frames is not None:
            try:
                self.frames(frame)
            except Exception:
                log.exception("frame sink failed")

    # -- turn ---------------------------------------------------------------------------------
    async def _turn(self) -> None:
        self._last_turn += 1
        turn = self._last_turn
        self._cancel_cause = None
        self.current_turn, self.current_step = turn, 0
        self.session.append(TurnStart(turn=turn))
        reason: TurnEndReason | None = None
        step = 0
        target: Target = "next-turn"
        max_steps, max_time = self.max_steps, self.max_time
        timer = self._start_timer(max_time)
        try:
            while True:
                if max_steps is not None and step >= max_steps:
                    reason = TurnEndReason(kind="budget", cause="max-steps", limit=max_steps)
                    break
                decision = await self._pre_step(target, turn, step + 1)
                if decision.kind == "reject":
                    reason = TurnEndReason(kind="blocked", cause=decision.reason or "rejected by agent/pre-step")
                    break
                if step == 0 and not decision.messages:
                    reason = COMPLETED  # a turn with no step
                    break
                step += 1
                self.current_step = step
                self.session.append(StepStart(turn=turn, step=step))
                self._set_status("running")
                try:
                    ended = await self._step(decision, turn, step)
                finally:
                    self.session.append(StepEnd(turn=turn, step=step))
                reason = MAX_TOKENS if reason is not None and reason.kind == "max-tokens" else ended
                if reason is not None:
                    if not self.inbox.next_step:
                        await self.scope.waterfall("agent/turn-stopping", TurnStopping(turn, step, reason, self))
                    if not self.inbox.next_step:
                        break
                target = "next-step"
        except asyncio.CancelledError:
            if self._cancel_cause == _TIME_UP:
                reason = TurnEndReason(kind="budget", cause="max-time", limit=max_time)
            else:
                reason = TurnEndReason(kind="aborted", cause=self._cancel_cause or "cancelled")
        except Exception as exc:
            if not isinstance(exc, ModelError | UserError | LogWriteError):
                log.exception("turn %s failed", turn)
            reason = TurnEndReason(kind="error", error=error_info(exc))
        finally:
            if timer is not None:
                timer.cancel()
            await self._end_turn(turn, reason)

    async def _end_turn(self, turn: int, reason: TurnEndReason | None) -> None:
        """Flush, commit ``turn/end``, flush again. A turn whose facts cannot be made durable did
        not complete: a failed first flush becomes the turn's error (DISK_FULL ...); a cancel
        meanwhile is re-raised once ``turn/end`` is committed."""
        cancelled = False
        await self.scope.waterfall("agent/turn-end", TurnStopping(turn, self.current_step or 0, reason or COMPLETED, self))
        try:
            await self._durable()
        except SessionError as exc:  # DISK_FULL, LOG_WRITE_FAILED, LOG_CLOSED
            if reason is None or reason.kind != "error":
                reason = TurnEndReason(kind="error", error=error_info(exc))
        except asyncio.CancelledError:
            cancelled = True
        except Exception as exc:
            log.exception("flush before the end of turn %s failed", turn)
            reason = TurnEndReason(kind="error", error=error_info(exc))
        self.session.append(TurnEnd(turn=turn, reason=reason or TurnEndReason(kind="aborted", cause="unknown")))
        if not self._more_work():  # the turn is over: say so now, not after the last fsync
            self.current_turn = self.current_step = None
            self._set_status("idle")
        try:
            await self._durable()
        except SessionError as exc:
            log.warning("the end of turn %s is not durable yet: %s", turn, exc)
        except asyncio.CancelledError:
            cancelled = True
        except Exception:
            log.exception("flush at the end of turn %s failed", turn)
        self._cancel_cause = None
        if cancelled:
            raise asyncio.CancelledError

    def _start_timer(self, max_time: float | None) -> asyncio.TimerHandle | None:
        """Cancel the running turn when its time budget runs out (the first cause wins)."""
        task = asyncio.current_task()
        if max_time is None or task is None:
            return None

        def time_up() -> None:
            if self._cancel_cause is None and not task.done():
                self._cancel_cause = _TIME_UP
                task.cancel()

        return asyncio.get_running_loop().call_later(max_time, time_up)

    async def _pre_step(self, target: Target, turn: int, step: int) -> PreStep:
        claimed = self.inbox.claim(target, turn)
        provider, _, name = self.model.partition(":")
        env = PromptEnv(provider=provider, model=name, cwd=self.session.cwd, session_id=self.session.id)
        await self.scope.waterfall("agent/prepare-tools", self)  # lazy tool providers (MCP) start here
        assembly = collect_assembly(self.scope, env, tools=self._tool_schemas())
        self.last_assembly = assembly
        snapshot = self.runtime_context.project(assembly.rendered_contexts())
        messages = (*claimed, snapshot) if snapshot is not None else tuple(claimed)
        decision = PreStep(turn, step, messages, assembly, tuple(claimed), snapshot)
        out = await self.scope.waterfall("agent/pre-step", decision)
        return out if isinstance(out, PreStep) else decision

    # -- step ---------------------------------------------------------------------------------
    async def _step(self, decision: PreStep, turn: int, step: int) -> TurnEndReason | None:
        system = decision.assembly.render_system()
        attempt = 0
        overflow_retried = False
        tools = decision.assembly.tools
        while True:
            attempt += 1
            prepared = prepare_request(self.model, adapter_for=self._adapter, config=self.config)
            self.system_prompt.project(system, turn=turn, step=step)
            if attempt == 1:  # context management: compact before the request would not fit
                if await self.compactor.maybe_compact(prepared, turn=turn, pending=decision.messages, tools=tools):
                    decision = self._resnapshot(decision, entered=False, turn=turn)
            request, edits = await self._request(prepared, decision, turn, step, attempt)
            try:
                event, stream = await run_attempt(
                    self.session, prepared, request, turn=turn, step=step, attempt=attempt, frames=self.frames,
                    cite=edits,
                )
                break
            except ModelError as exc:
                if exc.code == "CONTEXT_OVERFLOW" and not overflow_retried:
                    overflow_retried = True  # compact, then retry the request once
                    if await self.compactor.compact(prepared, turn=turn, trigger="context-length", tools=tools):
                        decision = self._resnapshot(decision, entered=True, turn=turn)
                        continue
                if not exc.retryable or attempt > self.max_retries:
                    raise
                delay = self._retry_delay(exc, attempt)
                info = error_info(exc)
                self.session.append(LlmRetry(turn=turn, step=step, attempt=attempt, error=info, delay_ms=delay))
                await asyncio.sleep(delay / 1000)
        calls = event.message.tool_calls
        self._batch_tools = tuple(c.name for c in calls)
        if self.debugger.active:  # stage 01: the assistant message is settled
            await self._pause_settled(event, turn, step)
        if stream.finish_reason == "max-tokens":
            return MAX_TOKENS
        if not calls:
            return COMPLETED
        batch = await execute_tool_calls(
            self.session, calls, turn=turn, step=step, runtime=self._runtime(), max_parallel=self.max_parallel,
            checkpoints=self.debugger, on_arguments_edited=self._arguments_edited(event),
        )
        for message in batch.deferred:  # contexts deferred by tools: only after the whole batch
            self.inbox.inject(message)
        return COMPLETED if batch.concluded else None

    async def _request(
        self, prepared: Any, decision: PreStep, turn: int, step: int, attempt: int
    ) -> tuple[ModelRequest, tuple[int, ...]]:
        """Stages 05 (derive) and 06 (freeze), each a place the debugger may pause; an edit of
        the request at 06 changes what is sent, and the answer will cite the edit."""
        tools = decision.assembly.tools
        derived = self.requests.derive(prepared, tools=tools, turn=turn, attempt=attempt,
                                       entered=decision.messages, on_entered=self.runtime_context.committed)
        dbg = self.debugger
        if dbg.wants("05", self._batch_tools):
            history = derived.history
            await dbg.checkpoint("05", tools=self._batch_tools, payload={
                "messageSeqs": list(history.seqs), "messages": [_wire(m) for m in history]})
        request = self.requests.freeze(prepared, derived, tools=tools, turn=turn, step=step, attempt=attempt)
        await self._durable()  # the frozen request is on disk before the provider sees it
        frozen = self.requests.last_frozen
        if not dbg.wants("06", self._batch_tools) or frozen is None:
            return request, ()
        pause = await dbg.checkpoint(
            "06", tools=self._batch_tools, seq=frozen.seq, value=list(request.messages), cite=(frozen.seq,),
            payload={"seq": frozen.seq, "provider": request.provider, "model": request.model,
                     "messages": [_wire(m) for m in request.messages], "tools": [t.name for t in request.tools]},
        )
        if pause is None or not pause.edits:
            return request, ()
        return dataclasses.replace(request, messages=tuple(pause.value)), tuple(pause.edits)

    async def _pause_settled(self, event: AssistantMessageEvent, turn: int, step: int) -> None:
        """Stage 01. A cancel while paused here still answers every call of the message."""
        try:
            await self.debugger.checkpoint("01", tools=self._batch_tools, seq=event.seq,
                                           payload=_wire(event))
        except asyncio.CancelledError:
            if event.message.tool_calls:
                await ToolBatch(self.session, event.message.tool_calls, turn=turn, step=step,
                                runtime=self._runtime()).abort()
            raise

    def _arguments_edited(self, event: AssistantMessageEvent) -> ArgumentsEdited:
        """The model sees an edited call: the assistant message is replaced in the surface by a
        copy with the edited arguments, citing what it shadows and the edits."""
        node: list[AssistantMessageEvent] = [event]  # the surface node that shows this message now

        def replace_call(call_id: str, arguments: str, edits: tuple[int, ...]) -> None:
            current = node[0]
            message = current.message
            blocks = tuple(b.model_copy(update={"arguments": arguments})
                           if isinstance(b, ToolCallBlock) and b.id == call_id else b for b in message.content)
            replaced = self.session.append(AssistantMessageEvent(
                turn=event.turn, step=event.step, message=message.model_copy(update={"content": blocks}),
                surface_op=ReplaceOp(start_seq=current.seq, end_seq=current.seq),
                source_event_seqs=(current.seq, *edits)))
            node[0] = replaced

        return replace_call
    def _resnapshot(self, decision: PreStep, *, entered: bool, turn: int) -> PreStep:
        """After a compaction shadowed the runtime-context snapshot, send it again: with the
        step's entered messages, or (when they were already committed) appended now."""
        snapshot = self.runtime_context.project(decision.assembly.rendered_contexts())
        if snapshot is None or (decision.snapshot is not None and decision.snapshot.content == snapshot.content
                                and not entered):
            return decision
        if entered:
            self.requests.append_entered([snapshot], turn=turn, on_commit=self.runtime_context.committed)
            return decision
        return dataclasses.replace(decision, messages=(*decision.messages, snapshot), snapshot=snapshot)

    async def compact(self) -> ContextCompacted | None:
        """Compact on demand (``%dsh compact``): summarise every turn but the last one (or, with a
        single turn, up to its last exchange). Only while idle (``TURN_RUNNING`` otherwise);
        ``None`` when there is nothing to compact."""
        task = self._turn_task
        if task is not None and not task.done():
            if self.current_turn is not None:
                raise UserError("a turn is running; compact after it ends (or stop it first)", code="TURN_RUNNING")
            await asyncio.wait({task})  # its turn/end is committed; only the last flush is left
        await self.wait_idle()  # a turn that just ended: its driver is finishing
        prepared = prepare_request(self.model, adapter_for=self._adapter, config=self.config)
        last = self._last_turn or None
        done = await self.compactor.compact(prepared, turn=None, keep_turn=last, trigger="manual",
                                            tools=self._tool_schemas())
        await self._durable()
        return done

    # -- helpers ------------------------------------------------------------------------------
    def _retry_delay(self, exc: ModelError, attempt: int) -> int:
        if exc.retry_after_ms is not None:
            return min(max(exc.retry_after_ms, 0), self.retry_cap_ms)
        return min(self.retry_base_ms * 2 ** (attempt - 1), self.retry_cap_ms)

    def _adapter(self, model_id: str) -> ModelAdapter:
        adapter = self._adapters.get(model_id)
        if adapter is None:
            adapter = self._adapters[model_id] = self.adapter_for(model_id)
        return adapter

    def _tool_schemas(self) -> tuple[Any, ...]:
        return self.tools.schemas()

    def effective_tools(self) -> ToolRegistry:
        """The agent's registry plus the tools its Scope contributes (scope wins by name)."""
        scoped = self.scope.tools()
        if not scoped:
            return self.tools
        merged = ToolRegistry(self.tools)
        for tool in scoped:
            merged.register(tool, replace=True)
        return merged

    def _runtime(self) -> ToolRuntime:
        """The ToolRuntime for a batch; rebuilt only when the tools, scope or policy changed."""
        key = (self.context.version, id(self.tools.schemas()), self.policy_mode, id(self.approver), id(self.frames),
               id(self.approval_policy))
        if self._runtime_cache is not None and self._runtime_cache[0] == key:
            return self._runtime_cache[1]
        runtime = self._new_runtime()
        if self.approval_policy is not None and self.approval_policy.pre_execute not in runtime.pre_execute:
            runtime.pre_execute.insert(0, self.approval_policy.pre_execute)
        runtime = self._hooks.install(runtime)
        self._runtime_cache = (key, runtime)
        return runtime

    def _new_runtime(self) -> ToolRuntime:
        if self.runtime_factory is not None:
            return self.runtime_factory(self)
        return ToolRuntime(
            self.effective_tools(),
            workspace=self.session.cwd or os.getcwd(),
            approver=self.approver,
            session=self.session,
            frames=self.frames,
            policy_mode=self.policy_mode,
        )

    async def _durable(self) -> None:
        """Flush the log (write + fsync) on a worker thread: the host loop never waits on disk.

        A cancel while it runs does not stop the write; the flush finishes on its thread."""
        if self.flush is None:
            return
        task = asyncio.ensure_future(asyncio.to_thread(self.flush))
        task.add_done_callback(_retrieve)  # a cancel left it running: its error is still seen here
        await asyncio.shield(task)

    async def flush_quietly(self, where: str) -> None:
        """A durability point that must not fail what waits on it (a debugger pause, an approval
        wait): a failed flush is logged, and the loop's next flush reports it as the turn's error."""
        try:
            await self._durable()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("flushing the log at %s failed: %s", where, exc)

    def __repr__(self) -> str:
        return f"<Agent {self.session.id} {self.model} {self.status} turn={self.current_turn}>"


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", exclude_none=True)


def _retrieve(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("a flush whose turn was cancelled failed: %s", task.exception())


def _msg(message: UserMessage | str) -> UserMessage:
    return user_text(message) if isinstance(message, str) else message
