"""A turn as a few step values and the hook points of the one driver that runs them.

A turn is a walk over small immutable values (in the spirit of graph nodes): the driver
(:func:`dsh_notebook.agent.turn.drive`) takes one, runs its handler and gets the next::

    NextStep(target) ─► ModelStep(decision) ─► ToolStep(event) ─► StepDone(reason | None)
         ▲                       └────────────────────────────────► StepDone
         └──────────────────────────── StepDone(None) / steered ◄──────┘
    NextStep / StepDone ─► End(reason)

- :class:`NextStep` claims the input (``next-turn`` first, then ``next-step``), assembles the
  prompt, runs ``agent/pre-step`` and opens a step (``step/start``) — or ends the turn;
- :class:`ModelStep` forms the request (compaction, the window fit, the debugger's stages 05/06),
  streams it with retries, settles the ``assistant/message`` (stage 01);
- :class:`ToolStep` runs the message's tool batch (every call answered);
- :class:`StepDone` closes the step (``step/end``) and decides: another step, or ``End``.

Everything that is not the loop itself sits on a :class:`TurnHook` (budgets, compaction, the
debugger, the no-progress guard); each hook overrides only the points it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..wire.events import AssistantMessageEvent, StepEnd, TurnEndReason
from .config import AgentConfig
from .hooks import PreStep
from .inbox import Target

if TYPE_CHECKING:
    from ..context import Scope
    from ..models.base import ModelAdapter, ModelRequest
    from ..session.session import Session
    from ..tools.outcome import ToolOutcome
    from ..tools.runtime import ToolRuntime
    from ..tools.scheduler import BatchOutcome
    from ..wire.control import AgentStatus
    from ..wire.events import ToolSchema
    from ..wire.follow import FrameSink
    from ..wire.messages import ToolCallBlock
    from .compactor import Compactor
    from .debugger import Debugger
    from .inbox import Inbox
    from .projections import RuntimeContextProjection, SystemPromptProjection
    from .prompt import PromptAssembly
    from .request import DerivedRequest, ModelRoute, RequestBuilder

WindowSource = Literal["flag", "server", "catalog"]


class AgentParts(Protocol):
    """The agent as the turn loop sees it: the parts the driver, the step handlers and the hooks
    use (:class:`~.agent.Agent` is one; the loop never imports it)."""

    session: Session
    config: AgentConfig
    scope: Scope
    inbox: Inbox
    debugger: Debugger
    compactor: Compactor
    requests: RequestBuilder
    runtime_context: RuntimeContextProjection
    system_prompt: SystemPromptProjection
    frames: FrameSink | None
    status: AgentStatus
    cancel_cause: str | None
    current_turn: int | None
    current_step: int | None
    last_turn: int
    batch_tools: tuple[str, ...]
    last_assembly: PromptAssembly | None
    asked_windows: dict[str, int | None]

    def turn_hooks(self) -> tuple[TurnHook, ...]: ...
    def tool_schemas(self, names: tuple[str, ...] | None = None) -> tuple[ToolSchema, ...]: ...
    def tool_runtime(self) -> ToolRuntime: ...
    def adapter(self, model_id: str) -> ModelAdapter: ...
    def set_status(self, status: AgentStatus, *, announce: bool = True) -> None: ...
    def more_work(self) -> bool: ...
    def resnapshot(self, decision: PreStep, *, entered: bool, turn: int) -> PreStep: ...
    async def durable(self) -> None: ...


@dataclass(frozen=True)
class Window:
    """A turn's context window in tokens and where it came from."""

    tokens: int | None
    source: WindowSource | None = None


@dataclass
class TurnRun:
    """The state of one running turn (what the step handlers and the hooks share)."""

    agent: AgentParts
    turn: int
    config: AgentConfig
    hooks: tuple[TurnHook, ...]
    step: int = 0
    last: TurnEndReason | None = None  # the previous step's reason
    step_open: bool = False
    window: Window | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _points: dict[str, tuple[Any, ...]] = field(default_factory=dict, repr=False)

    def at(self, point: str) -> tuple[Any, ...]:
        """The hooks' bound methods for ``point`` (a :class:`TurnHook` method name), in order:
        only the hooks that override it (the driver asks each point several times a step, and
        a no-op ``async`` method still costs a coroutine)."""
        found = self._points.get(point)
        if found is None:
            base = getattr(TurnHook, point)
            found = self._points[point] = tuple(
                getattr(hook, point) for hook in self.hooks if getattr(type(hook), point) is not base)
        return found

    def review(self, call: ToolCallBlock, outcome: ToolOutcome) -> ToolOutcome:
        for review in self.at("review"):
            outcome = review(self, call, outcome)
        return outcome

    def close_step(self) -> None:
        if self.step_open:
            self.step_open = False
            self.agent.session.append(StepEnd(turn=self.turn, step=self.step))


@dataclass(frozen=True)
class NextStep:
    target: Target


@dataclass(frozen=True)
class ModelStep:
    decision: PreStep


@dataclass(frozen=True)
class ToolStep:
    event: AssistantMessageEvent  # the message as logged (secrets masked)
    calls: tuple[ToolCallBlock, ...] = ()  # its calls as the model wrote them: what runs (memory only)


@dataclass(frozen=True)
class StepDone:
    reason: TurnEndReason | None  # None: the loop goes on


@dataclass(frozen=True)
class End:
    reason: TurnEndReason


Node = NextStep | ModelStep | ToolStep | StepDone | End


class TurnHook:
    """A hook on the driver; every method is a no-op here (override what you need)."""

    def turn_started(self, run: TurnRun) -> None:
        return None

    def turn_ending(self, run: TurnRun) -> None:
        return None

    def cancelled(self, run: TurnRun) -> TurnEndReason | None:
        """The end reason of a cancelled turn, if this hook caused the cancel."""
        return None

    def before_step(self, run: TurnRun) -> End | None:
        return None

    async def before_request(self, run: TurnRun, route: ModelRoute, decision: PreStep) -> PreStep:
        return decision

    async def on_overflow(self, run: TurnRun, route: ModelRoute, decision: PreStep) -> PreStep | None:
        """The provider said the request does not fit: a decision to retry with, or ``None``."""
        return None

    async def derived(self, run: TurnRun, derived: DerivedRequest) -> None:
        return None

    async def frozen(self, run: TurnRun, request: ModelRequest) -> tuple[ModelRequest, tuple[int, ...]]:
        return request, ()

    async def settled(self, run: TurnRun, event: AssistantMessageEvent) -> None:
        return None

    def review(self, run: TurnRun, call: ToolCallBlock, outcome: ToolOutcome) -> ToolOutcome:
        """A tool result before it is committed (the only chance to change what the model sees)."""
        return outcome

    def after_tools(self, run: TurnRun, batch: BatchOutcome) -> TurnEndReason | None:
        return None


def first(values: Any) -> Any:
    """The first value that is not ``None`` (a hook's answer), else ``None``."""
    return next((v for v in values if v is not None), None)


__all__ = ["AgentParts", "End", "ModelStep", "NextStep", "Node", "StepDone", "ToolStep", "TurnHook", "TurnRun", "Window", "first"]
