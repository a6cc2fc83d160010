"""The Agent (seed 001 L5–L7): input, control and the driver task of one session's turns.

A **turn** is one task round: ``turn/start`` … ``turn/end{reason}`` (always written). A **step**
is one model call (with retries inside) and its tool batch: ``step/start`` → entered user
messages (first attempt only) → ``request/frozen`` → the stream → ``assistant/message`` (or
``assistant/attempt``) → ``tool/call``/``tool/result`` → ``step/end``. The turn is a walk over
step values run by one driver (:mod:`.steps`, :mod:`.turn`, :mod:`.model_step`); budgets
(:mod:`.guards`), context management (:mod:`.fit`, :mod:`.compactor`), the debugger
(:mod:`.debug_hook`) and the no-progress guard sit on the driver's hook points. End reasons:
``completed``, ``aborted{cause}``, ``blocked{cause}``, ``error{error}``, ``max-tokens`` (sticky),
``budget{cause, limit}``, ``stuck{cause}``. Settings: :class:`~.config.AgentConfig`
(``agent.config``; read at each turn's start).

The driver is an asyncio task on the loop the agent is used from (the host's loop thread);
``followup``/``steer``/``inject``/``cancel`` must be called on that loop's thread.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Literal, TypedDict

from pydantic import JsonValue

from ..context import HarnessContext, ScopeView
from ..models.base import ModelAdapter
from ..session.session import Session
from ..tools.base import ApprovalMode, Approver, AutoApprover
from ..tools.modes import LEGACY, SessionMode
from ..tools.plan import attach_plan_mode
from ..tools.registry import ToolRegistry, builtin_tools
from ..tools.rules import ApprovalPolicy
from ..tools.runtime import ToolRuntime
from ..wire.base import dump
from ..wire.control import AgentStatus
from ..wire.events import ContextCompacted, PermissionMode, ToolSchema, TurnStart
from ..wire.follow import FollowStatus, FrameSink, RunFrame
from ..wire.messages import UserMessage, user_text
from .compactor import Compactor
from .config import AgentConfig
from .debug_hook import DebuggerHook
from .debugger import Debugger
from .driver import AgentDriver
from .fit import ContextHook, resolve_window
from .guards import Budgets, StuckGuard
from .hooks import PreStep, ToolHookBridge
from .inbox import Inbox
from .model_step import route_for_config
from .projections import RuntimeContextProjection, SystemOp, SystemPromptProjection
from .prompt import PromptAssembly
from .request import RequestBuilder
from .steps import AgentParts, TurnHook
from .toolset import Toolset

log = logging.getLogger(__name__)


class AgentView(TypedDict):
    """``Agent.describe()``: status, turn/step, inbox, scope, the last request."""

    session: str
    model: str
    status: AgentStatus
    turn: int | None
    step: int | None
    inbox: list[dict[str, JsonValue]]
    scope: ScopeView
    tools: list[str]
    systemPromptOp: SystemOp | None
    lastRequestSeq: int | None
    contextWindow: int | None
    windowSource: Literal["flag", "server", "catalog"] | None


class Agent(AgentDriver):
    """Coordinates the model–tool loop of one session (seed 001 object 22)."""

    def __init__(
        self,
        session: Session,
        config: AgentConfig | None = None,
        *,
        adapter_for: Callable[[str], ModelAdapter],
        model: str | None = None,
        tools: ToolRegistry | None = None,
        runtime_factory: Callable[[Agent], ToolRuntime] | None = None,
        approver: Approver | None = None,
        policy_mode: ApprovalMode = "auto",
        context: HarnessContext | None = None,
        frames: FrameSink | None = None,
        flush: Callable[[], None] | None = None,
        approval_policy: ApprovalPolicy | None = None,
        mode: PermissionMode | None = None,
    ) -> None:
        """Build the agent of ``session`` (fresh or resumed: inbox, projections and the turn
        counter are restored from its log). ``config`` says what it does (``model=`` alone is
        short for ``AgentConfig(model=...)``); ``adapter_for(model_id)`` routes a model id to an
        adapter (cached per id); ``tools`` defaults to the built-ins; tool batches run through
        ``runtime_factory(agent)`` or a default ``ToolRuntime(approver, policy_mode)``. ``context``
        is the host's (global) context: the agent lives in a child ``agent:<id>``
        (``agent.context``) whose Scope decides what it sees. ``frames`` gets the transient
        frames; ``flush`` makes the log durable (before every model request and at turn ends).
        ``mode``: the permission mode (:mod:`dsh_notebook.tools.modes`; default: the legacy
        ``policy_mode``'s) unless the log's last ``mode/changed`` says otherwise; ``agent.modes``."""
        if config is None:
            if model is None:
                raise TypeError("Agent needs a config (or model=)")
            config = AgentConfig(model=model)
        self.session = session
        self.config = config
        self.adapter_for = adapter_for
        self.approver: Approver = approver or AutoApprover()
        self.policy_mode: ApprovalMode = policy_mode
        self.modes = SessionMode(session, mode or LEGACY[policy_mode])
        self.context = (context or HarnessContext("host")).child(f"agent:{session.id}")
        self.context.provide("agent", self)
        self.scope = self.context.scope()
        attach_plan_mode(self.context, self.modes)  # disposed with the context
        self.frames = frames
        self.flush = flush
        self.approval_policy = approval_policy  # rules / grants / callables, first pre-execute hook
        self.toolset = Toolset(self, tools if tools is not None else ToolRegistry(builtin_tools()), runtime_factory)
        self.tool_hooks = ToolHookBridge(self.scope)
        self.compactor = Compactor(session, threshold=config.compact_threshold)
        self.inbox = Inbox.restore(session, wake=self._wake)
        self.runtime_context = RuntimeContextProjection(session)
        self.system_prompt = SystemPromptProjection(session)
        self.requests = RequestBuilder(session)  # the agent flushes, off the loop (durable)
        self.debugger = Debugger(session, emit=self.emit, durable=lambda: self.flush_quietly("a debugger pause"))
        self.batch_tools: tuple[str, ...] = ()  # the tools of the last batch (debugger 05/06)
        self.last_assembly: PromptAssembly | None = None
        self.asked_windows: dict[str, int | None] = {}  # the servers' windows, asked once per model
        self.last_turn = max((e.turn for e in session.events if isinstance(e, TurnStart)), default=0)
        self._adapters: dict[str, ModelAdapter] = {}
        self._status_fns: list[Callable[[AgentStatus], None]] = []
        self.init_driver()

    # -- settings -----------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.config.model

    @model.setter
    def model(self, value: str) -> None:
        self.config.model = value

    @property
    def tools(self) -> ToolRegistry:
        return self.toolset.registry

    @tools.setter
    def tools(self, registry: ToolRegistry) -> None:
        self.toolset.registry = registry

    def turn_hooks(self) -> tuple[TurnHook, ...]:
        """The hooks of a new turn, in the order they are asked (fresh per turn)."""
        self.toolset.offered = self.config.tools
        return Budgets(), ContextHook(), DebuggerHook(), StuckGuard()

    # -- input (host-loop thread only) --------------------------------------------------------
    def followup(self, message: UserMessage | str) -> None:
        """Queue ``message`` as the prompt of a coming turn and wake the driver."""
        self.inbox.followup(_msg(message))

    def steer(self, message: UserMessage | str) -> None:
        """Add ``message`` to the running turn's next step (or start a turn) and wake."""
        if self.cancel_cause is not None:  # the running turn is being aborted: queue it instead
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
    def on_status(self, fn: Callable[[AgentStatus], None]) -> Callable[[], None]:
        """Call ``fn(status)`` whenever the status changes. Returns an unsubscribe function."""
        self._status_fns.append(fn)
        return lambda: self._status_fns.remove(fn) if fn in self._status_fns else None

    async def close(self) -> None:
        """Cancel any running turn (cause ``shutdown``), close the adapters, dispose the context."""
        await self.stop_driver()
        adapters, self._adapters = list(self._adapters.values()), {}
        for adapter in adapters:
            try:
                await adapter.aclose()
            except Exception:
                log.exception("closing the %s adapter failed", adapter.provider)
        self.context.dispose()

    def describe(self) -> AgentView:
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
            "contextWindow": frozen.context_window if frozen else None,
            "windowSource": frozen.window_source if frozen else None,
        }

    def set_status(self, status: AgentStatus, *, announce: bool = True) -> None:
        """Take ``status``; say so (a frame, the listeners if changed) unless ``announce=False``."""
        self.status = status
        if not announce:  # said by a later call (a turn's end: once it is written)
            return
        told, self._told = self._told, status
        if self.frames is not None:
            self.emit(FollowStatus.model_construct(status=status, turn=self.current_turn, step=self.current_step))
        if status != told:
            for fn in list(self._status_fns):
                try:
                    fn(status)
                except Exception:
                    log.exception("status listener failed")

    def emit(self, frame: RunFrame) -> None:
        if self.frames is not None:
            try:
                self.frames(frame)
            except Exception:
                log.exception("frame sink failed")

    # -- context ------------------------------------------------------------------------------
    def resnapshot(self, decision: PreStep, *, entered: bool, turn: int) -> PreStep:
        """After a compaction shadowed the runtime-context snapshot, send it again: before the
        step's entered messages, or (when they were already committed) appended now."""
        if decision.assembly.contexts_in_system:
            return decision  # the compact prompt: the runtime context is in the system prompt
        snapshot = self.runtime_context.project(decision.assembly.rendered_contexts())
        if snapshot is None or (decision.snapshot is not None and decision.snapshot.content == snapshot.content
                                and not entered):
            return decision
        if entered:  # the step's input is committed: the snapshot can only follow it
            self.requests.append_entered([snapshot], turn=turn, on_commit=self.runtime_context.committed)
            return decision
        rest = tuple(m for m in decision.messages if m is not decision.snapshot)
        return dataclasses.replace(decision, messages=(snapshot, *rest), snapshot=snapshot)  # before the prompt

    async def compact(self) -> ContextCompacted | None:
        """Compact on demand (``%dsh compact``): summarise every turn but the last one, which stays
        whole. Only while idle (``TURN_RUNNING`` otherwise); ``None`` when there is nothing to
        compact (a session of one turn)."""
        await self.wait_turn_over()
        route = route_for_config(self, self.config)
        self.compactor.window_tokens = (await resolve_window(self.config, route, self.asked_windows)).tokens
        done = await self.compactor.compact(route, turn=None, keep_turn=self.last_turn or None, trigger="manual",
                                            tools=self.tool_schemas(self.config.tools))
        await self.durable()
        return done

    # -- helpers ------------------------------------------------------------------------------
    def adapter(self, model_id: str) -> ModelAdapter:
        adapter = self._adapters.get(model_id)
        if adapter is None:
            adapter = self._adapters[model_id] = self.adapter_for(model_id)
        return adapter

    def tool_schemas(self, names: tuple[str, ...] | None = None) -> tuple[ToolSchema, ...]:
        return self.toolset.schemas(names)

    def effective_tools(self) -> ToolRegistry:
        """The agent's registry plus the tools its Scope contributes (scope wins by name)."""
        return self.toolset.effective()

    def tool_runtime(self) -> ToolRuntime:
        return self.toolset.runtime()

    def __repr__(self) -> str:
        return f"<Agent {self.session.id} {self.model} {self.status} turn={self.current_turn}>"


def _parts(agent: Agent) -> AgentParts:
    """An Agent is the :class:`~.steps.AgentParts` the turn loop takes (mypy checks it here)."""
    return agent


def _msg(message: UserMessage | str) -> UserMessage:
    return user_text(message) if isinstance(message, str) else message


__all__ = ["Agent", "AgentConfig"]
