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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..wire.events import AssistantMessageEvent, TurnEndReason
from .hooks import PreStep
from .inbox import Target

if TYPE_CHECKING:
    from ..models.base import ModelRequest
    from ..tools.outcome import ToolOutcome
    from ..tools.scheduler import BatchOutcome
    from ..wire.messages import ToolCallBlock
    from .request import DerivedRequest, ModelRoute
    from .turn import TurnRun


@dataclass(frozen=True)
class NextStep:
    target: Target


@dataclass(frozen=True)
class ModelStep:
    decision: PreStep


@dataclass(frozen=True)
class ToolStep:
    event: AssistantMessageEvent


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


__all__ = ["End", "ModelStep", "NextStep", "Node", "StepDone", "ToolStep", "TurnHook", "first"]
