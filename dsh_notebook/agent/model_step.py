"""The model step: form the request, stream it (retries inside), settle the answer.

Per attempt: route the model, project the system prompt, (first attempt) let the hooks compact,
derive the history (stage 05), make it fit the window (:func:`.fit.fit_request`), freeze it
with its output limit (stage 06; durable before the provider sees it), stream it. A retryable
``ModelError`` is retried after ``retry_base_ms·2^(n-1)`` (or the provider's ``retry_after_ms``),
capped; ``CONTEXT_OVERFLOW`` compacts and retries once, never the generic retry.

A response cut by the output limit (finish ``max-tokens``) keeps its text and ends the turn
``max-tokens``; each tool call it was cut in is answered ``TRUNCATED_CALL`` (not run).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..errors import ModelError
from ..models.base import ModelRequest
from ..tools.outcome import error_outcome
from ..tools.sandbox import cap_middle
from ..wire.events import AssistantMessageEvent, LlmRetry, ToolCall, ToolResult
from .compaction import overflow_error
from .config import AgentConfig
from .fit import fit_request
from .hooks import COMPLETED, MAX_TOKENS, PreStep, error_info
from .request import ModelRoute, prepare_request
from .steps import ModelStep, Node, StepDone, ToolStep, TurnRun, first
from .stream import StreamAttempt, run_attempt


async def model_step(run: TurnRun, node: ModelStep) -> Node:
    event, stream = await _attempts(run, node.decision)
    agent = run.agent
    calls = event.message.tool_calls
    agent.batch_tools = tuple(c.name for c in calls)
    for settled in run.at("settled"):
        await settled(run, event)
    if stream.finish_reason == "max-tokens":
        answer_truncated(run, event, stream)
        return StepDone(MAX_TOKENS)
    return ToolStep(event, stream.calls_to_run()) if calls else StepDone(COMPLETED)


def route_for(run: TurnRun) -> ModelRoute:
    return route_for_config(run.agent, run.config)


def route_for_config(agent: Any, cfg: AgentConfig) -> ModelRoute:
    """Route ``cfg.model`` (the request options, and a configured ``max_tokens``, go with it)."""
    options = cfg.request_options if cfg.max_tokens is None else {**cfg.request_options, "max_tokens": cfg.max_tokens}
    return prepare_request(cfg.model, adapter_for=agent.adapter, config=options)


async def _attempts(run: TurnRun, decision: PreStep) -> tuple[AssistantMessageEvent, StreamAttempt]:
    agent, cfg = run.agent, run.config
    system = decision.assembly.render_system()
    attempt, overflow_retried = 0, False
    while True:
        attempt += 1
        route = route_for(run)
        agent.system_prompt.project(system, turn=run.turn, step=run.step)
        if attempt == 1:
            for before_request in run.at("before_request"):
                decision = await before_request(run, route, decision)
        request, edits = await _request(run, route, decision, attempt)
        try:
            return await run_attempt(agent.session, route, request, turn=run.turn, step=run.step, attempt=attempt,
                                     frames=agent.frames, cite=edits)
        except ModelError as exc:
            if exc.code == "CONTEXT_OVERFLOW" and not overflow_retried:
                overflow_retried = True  # compact, then retry the request once
                retry = first([await on_overflow(run, route, decision) for on_overflow in run.at("on_overflow")])
                if retry is not None:
                    decision = retry
                    continue
            if exc.code == "CONTEXT_OVERFLOW":  # compacted and retried once already: say what to change
                raise overflow_error(exc) from None
            if not exc.retryable or attempt > cfg.max_retries:
                raise
            delay = retry_delay(cfg, exc, attempt)
            agent.session.append(LlmRetry(turn=run.turn, step=run.step, attempt=attempt, error=error_info(exc),
                                          delay_ms=delay))
            await asyncio.sleep(delay / 1000)


async def _request(run: TurnRun, route: ModelRoute, decision: PreStep,
                   attempt: int) -> tuple[ModelRequest, tuple[int, ...]]:
    """Stages 05 (derive) and 06 (freeze), each a place the debugger may pause."""
    agent, tools = run.agent, decision.assembly.tools
    derived = agent.requests.derive(route, tools=tools, turn=run.turn, attempt=attempt,
                                    entered=decision.messages, on_entered=agent.runtime_context.committed)
    derived, limit = await fit_request(run, route, decision, derived)
    for on_derived in run.at("derived"):
        await on_derived(run, derived)
    request = agent.requests.freeze(route, derived, tools=tools, turn=run.turn, step=run.step, attempt=attempt,
                                    max_tokens=limit, window=run.window)
    await agent.durable()  # the frozen request is on disk before the provider sees it
    edits: tuple[int, ...] = ()
    for on_frozen in run.at("frozen"):
        request, more = await on_frozen(run, request)
        edits = (*edits, *more)
    return request, edits


def retry_delay(cfg: AgentConfig, exc: ModelError, attempt: int) -> int:
    if exc.retry_after_ms is not None:
        return min(max(exc.retry_after_ms, 0), cfg.retry_cap_ms)
    return min(cfg.retry_base_ms << max(attempt - 1, 0), cfg.retry_cap_ms)


def answer_truncated(run: TurnRun, event: AssistantMessageEvent, stream: StreamAttempt) -> None:
    """Answer each tool call of a response cut by the output limit: ``TRUNCATED_CALL``, not run."""
    session = run.agent.session
    for call in event.message.tool_calls:
        raw = stream.raw_arguments(call.id)
        seq = session.append(ToolCall(turn=run.turn, step=run.step, call_id=call.id, name=call.name,
                                      arguments=call.arguments)).seq
        outcome = error_outcome(
            call.id, f"the call to {call.name} was cut off by the output limit (max_tokens) before it was "
            f"complete, so it was not run; arguments received: {cap_middle(raw, 300)}", "TRUNCATED_CALL")
        session.append(ToolResult(turn=run.turn, step=run.step, message=outcome.message, error=outcome.error,
                                  source_event_seqs=(seq,)))


__all__ = ["answer_truncated", "model_step", "retry_delay", "route_for", "route_for_config"]
