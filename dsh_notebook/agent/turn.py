"""The one driver of a turn: ``turn/start`` … the step values (:mod:`.steps`) … ``turn/end``.

:func:`run_turn` opens the turn, reads a snapshot of ``agent.config`` (changes apply from the
next turn), builds the turn's hooks and walks the step values with :func:`drive` until an
:class:`~.steps.End`; ``turn/end{reason}`` is always written (:func:`end_turn`). The turn ends by
*data*: the last step had no tool calls (or a tool concluded the turn) **and** the next-step
inbox is still empty after ``agent/turn-stopping``. A ``max-tokens`` end is sticky: a step the
``agent/turn-stopping`` listeners forced after it does not turn it into ``completed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import LogWriteError, ModelError, SessionError, UserError
from ..models.routing import compact_prompt
from ..tools.scheduler import execute_tool_calls
from ..wire.events import StepStart, TurnEnd, TurnEndReason, TurnStart
from .debug_hook import arguments_edited
from .hooks import COMPLETED, MAX_TOKENS, PreStep, TurnStopping, error_info
from .model_step import model_step
from .prompt import PromptEnv, collect_assembly
from .steps import AgentParts, End, ModelStep, NextStep, Node, StepDone, ToolStep, TurnRun, first

log = logging.getLogger(__name__)


async def run_turn(agent: AgentParts) -> None:
    """One turn of ``agent`` (the body of its turn task)."""
    agent.last_turn += 1
    turn = agent.last_turn
    agent.cancel_cause = None
    agent.current_turn, agent.current_step = turn, 0
    agent.session.append(TurnStart(turn=turn))
    run = TurnRun(agent, turn, agent.config.snapshot(), agent.turn_hooks())
    reason: TurnEndReason | None = None
    for hook in run.hooks:
        hook.turn_started(run)
    try:
        reason = await drive(run, NextStep("next-turn"))
    except asyncio.CancelledError:
        reason = first(h.cancelled(run) for h in run.hooks) or TurnEndReason(
            kind="aborted", cause=agent.cancel_cause or "cancelled")
    except Exception as exc:
        if not isinstance(exc, ModelError | UserError | LogWriteError):
            log.exception("turn %s failed", turn)
        reason = TurnEndReason(kind="error", error=error_info(exc))
    finally:
        for hook in run.hooks:
            hook.turn_ending(run)
        await end_turn(agent, turn, reason)


async def drive(run: TurnRun, node: Node) -> TurnEndReason:
    """Run step values until an ``End``; a step left open by an exception is closed."""
    try:
        while not isinstance(node, End):
            node = await _HANDLERS[type(node)](run, node)
    finally:
        run.close_step()
    return node.reason


async def next_step(run: TurnRun, node: NextStep) -> Node:
    stop = first(before_step(run) for before_step in run.at("before_step"))
    if stop is not None:
        return stop  # type: ignore[no-any-return]
    decision = await pre_step(run, node.target, run.step + 1)
    if decision.kind == "reject":
        return End(TurnEndReason(kind="blocked", cause=decision.reason or "rejected by agent/pre-step"))
    if run.step == 0 and not decision.messages:
        return End(COMPLETED)  # a turn with no step
    agent = run.agent
    run.step += 1
    agent.current_step = run.step
    agent.session.append(StepStart(turn=run.turn, step=run.step))
    run.step_open = True
    agent.set_status("running")
    return ModelStep(decision)


async def tool_step(run: TurnRun, node: ToolStep) -> Node:
    agent, event = run.agent, node.event
    batch = await execute_tool_calls(
        agent.session, event.message.tool_calls, turn=run.turn, step=run.step, runtime=agent.tool_runtime(),
        max_parallel=run.config.max_parallel, pause_points=agent.debugger,
        on_arguments_edited=arguments_edited(agent.session, event), review=run.review,
        run_arguments={call.id: call.arguments for call in node.calls},
    )
    for message in batch.deferred:  # contexts deferred by tools: only after the whole batch
        agent.inbox.inject(message)
    stop = first(after_tools(run, batch) for after_tools in run.at("after_tools"))
    return StepDone(stop or (COMPLETED if batch.concluded else None))


async def step_done(run: TurnRun, node: StepDone) -> Node:
    run.close_step()
    reason = MAX_TOKENS if run.last is not None and run.last.kind == "max-tokens" else node.reason
    run.last = reason
    agent = run.agent
    if reason is not None:
        if not agent.inbox.next_step:
            await agent.scope.waterfall("agent/turn-stopping", TurnStopping(run.turn, run.step, reason, agent))
        if not agent.inbox.next_step:
            return End(reason)
    return NextStep("next-step")


async def pre_step(run: TurnRun, target: Any, step: int) -> PreStep:
    """Claim the input, assemble the prompt, project the runtime context, ``agent/pre-step``."""
    agent = run.agent
    claimed = agent.inbox.claim(target, run.turn)
    provider, _, name = run.config.model.partition(":")
    env = PromptEnv(provider=provider, model=name, cwd=agent.session.cwd, session_id=agent.session.id)
    await agent.scope.waterfall("agent/prepare-tools", agent)  # lazy tool providers (MCP) start here
    # a plain chat turn of a small model: the compact prompt, its runtime context in the system prompt
    compact = run.config.tools == () and compact_prompt(run.config.model)
    assembly = collect_assembly(agent.scope, env, tools=agent.tool_schemas(run.config.tools),
                                offered=run.config.tools, compact=compact)
    agent.last_assembly = assembly
    snapshot = None if compact else agent.runtime_context.project(assembly.rendered_contexts())
    # the runtime context goes before the step's input: a request's last message is the prompt
    # (a small model answers whatever user message comes last)
    messages = (snapshot, *claimed) if snapshot is not None else tuple(claimed)
    decision = PreStep(run.turn, step, messages, assembly, tuple(claimed), snapshot)
    out = await agent.scope.waterfall("agent/pre-step", decision)
    return out if isinstance(out, PreStep) else decision


async def end_turn(agent: AgentParts, turn: int, reason: TurnEndReason | None) -> None:
    """Flush, commit ``turn/end``, flush again, then say ``idle`` (unless more work waits): the
    agent is idle from the commit on (a rewind may go ahead) and says so, to followers and to the
    status listeners, once the turn's end is in the log file. A turn whose facts cannot be made
    durable did not complete: a failed first flush becomes the turn's error (DISK_FULL ...); a
    cancel meanwhile is re-raised once ``turn/end`` is committed."""
    cancelled = False
    await agent.scope.waterfall("agent/turn-end", TurnStopping(turn, agent.current_step or 0, reason or COMPLETED, agent))
    try:
        await agent.durable()
    except SessionError as exc:  # DISK_FULL, LOG_WRITE_FAILED, LOG_CLOSED
        if reason is None or reason.kind != "error":
            reason = TurnEndReason(kind="error", error=error_info(exc))
    except asyncio.CancelledError:
        cancelled = True
    except Exception as exc:
        log.exception("flush before the end of turn %s failed", turn)
        reason = TurnEndReason(kind="error", error=error_info(exc))
    agent.session.append(TurnEnd(turn=turn, reason=reason or TurnEndReason(kind="aborted", cause="unknown")))
    agent.debugger.stepping = False  # a step from the turn's last stage ends with it: no pause leaks
    agent.current_turn = agent.current_step = None  # no turn runs: a compact now waits for the flush
    if not agent.more_work():  # idle now (a rewind may go ahead), said once the turn end is written
        agent.set_status("idle", announce=False)
    try:
        await agent.durable()
    except SessionError as exc:
        log.warning("the end of turn %s is not durable yet: %s", turn, exc)
    except asyncio.CancelledError:
        cancelled = True
    except Exception:
        log.exception("flush at the end of turn %s failed", turn)
    if agent.status == "idle" and not agent.more_work():  # followers have the turn end by now (the hub
        agent.set_status("idle")  # sent it when the flush ended, or the disk refused it)
    agent.cancel_cause = None
    if cancelled:
        raise asyncio.CancelledError


_HANDLERS: dict[type, Callable[[TurnRun, Any], Awaitable[Node]]] = {
    NextStep: next_step, ModelStep: model_step, ToolStep: tool_step, StepDone: step_done,
}

__all__ = ["TurnRun", "drive", "end_turn", "run_turn"]  # TurnRun lives in .steps
