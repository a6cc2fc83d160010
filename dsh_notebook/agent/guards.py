"""The turn's limits as driver hooks: the budgets and the no-progress guard.

- :class:`Budgets` — ``max_steps`` (model requests per turn, checked before a further step
  starts: a model that calls tools forever is stopped after exactly ``max_steps`` requests, its
  last batch answered) and ``max_time`` (seconds per turn: when it runs out the turn is cancelled
  like an abort — running tools stopped, every call answered — and ends ``budget{max-time}``).
- :class:`StuckGuard` — the same tool call (name + arguments) answered the same way ``max_repeats``
  steps in a row: the same error or result (a glob that matched nothing, a file read again
  unchanged), or a denial, which counts whatever the arguments (it answers the tool, not them).
  The calls of one batch count once: the model asked for them before it saw any answer. That
  answer tells the model plainly that repeating it will not help; once more and the turn ends
  ``stuck`` after the batch (every call answered). A small local model that calls one read-only
  tool with the same arguments over and over is stopped at its third step, not at ``max_steps``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json

from ..tools.outcome import ToolOutcome
from ..tools.scheduler import BatchOutcome
from ..wire.events import TurnEndReason
from ..wire.messages import EXIT_LINE, ToolCallBlock, tool_text
from .steps import End, TurnHook, TurnRun

TIME_UP = "budget:max-time"  # the cancel cause of a turn whose time budget ran out
_NOT_REPEATS = frozenset({"CANCELLED", "ABORTED_BEFORE_DISPATCH"})
REPEAT_NOTE = ("\n\n[dsh] This is the same call with the same arguments, answered with the same {what} "
               "{count} times in a row. Repeating it will not help: do something different, or answer "
               "without it. One more identical call ends the turn.")
DENIED_NOTE = ("\n\n[dsh] {name} was denied the same way {count} times in a row, whatever its arguments. "
               "Repeating it will not help: do something different, or answer without it. One more "
               "denied call to {name} ends the turn.")


class Budgets(TurnHook):
    """``max_steps`` before each step, ``max_time`` as a timer over the whole turn."""

    def __init__(self) -> None:
        self.timer: asyncio.TimerHandle | None = None

    def turn_started(self, run: TurnRun) -> None:
        task, max_time, agent = asyncio.current_task(), run.config.max_time, run.agent
        if max_time is None or task is None:
            return

        def time_up() -> None:
            if agent.cancel_cause is None and not task.done():
                agent.cancel_cause = TIME_UP
                task.cancel()

        self.timer = asyncio.get_running_loop().call_later(max_time, time_up)

    def turn_ending(self, run: TurnRun) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def cancelled(self, run: TurnRun) -> TurnEndReason | None:
        if run.agent.cancel_cause == TIME_UP:
            return TurnEndReason(kind="budget", cause="max-time", limit=run.config.max_time)
        return None

    def before_step(self, run: TurnRun) -> End | None:
        limit = run.config.max_steps
        if limit is not None and run.step >= limit:
            return End(TurnEndReason(kind="budget", cause="max-steps", limit=limit))
        return None


class StuckGuard(TurnHook):
    """Counts identical calls answered identically in a row (``AgentConfig.max_repeats``; 0: off)."""

    def __init__(self) -> None:
        self.last: tuple[str, ...] | None = None
        self.step = -1  # the step whose batch last counted
        self.count = 0
        self.stuck: str | None = None

    def review(self, run: TurnRun, call: ToolCallBlock, outcome: ToolOutcome) -> ToolOutcome:
        limit = run.config.max_repeats
        if limit <= 0:
            return outcome
        if outcome.code in _NOT_REPEATS:
            self.last, self.count = None, 0
            return outcome
        # a denial is the tool's, not its arguments': a small model that asks again with other
        # arguments (its last call's id as the command) is answered the same way, and counted so
        args = "" if outcome.code == "DENIED" else _canonical(call.arguments)
        key = (call.name, args, str(outcome.is_error), outcome.code or "", outcome.text)
        if key != self.last:
            self.count = 1
        elif run.step != self.step:  # one batch counts once: the model had not seen any answer yet
            self.count += 1
        self.last, self.step = key, run.step
        if self.count > limit:
            self.stuck = call.name
        if self.count < limit:
            return outcome
        note = (DENIED_NOTE if outcome.code == "DENIED" else REPEAT_NOTE).format(
            name=call.name, what="error" if outcome.is_error else "result", count=self.count)
        return dataclasses.replace(outcome, message=tool_text(call.id, _with_note(outcome.text, note),
                                                              is_error=outcome.is_error))

    def after_tools(self, run: TurnRun, batch: BatchOutcome) -> TurnEndReason | None:
        name, self.stuck = self.stuck, None
        return None if name is None else TurnEndReason(kind="stuck", cause=name, limit=run.config.max_repeats)


def _with_note(text: str, note: str) -> str:
    """The note after the text, before a command's closing ``[exit code: N]`` line (kept last)."""
    head, _, last = text.rstrip().rpartition("\n")
    if head and EXIT_LINE.match(last.strip()):
        return f"{head}{note}\n{last}"
    return text + note


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (ValueError, RecursionError):
        return arguments.strip()


__all__ = ["TIME_UP", "Budgets", "StuckGuard"]
