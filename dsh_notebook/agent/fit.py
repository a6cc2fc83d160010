"""The window and the fit (issue 20 items 1, 3, 4): every request bounded, none oversized.

- :func:`resolve_window` — ``(tokens, source)``: ``flag`` (``AgentConfig.context_window``, else
  ``DSH_CONTEXT_WINDOW``), ``server`` (the adapter's ``server_window()``, asked once per model),
  ``catalog`` (:mod:`dsh_notebook.session.catalog`), else unknown.
- :func:`output_limit` — ``AgentConfig.max_tokens``, else ``min(8192, window / 4)`` (8192 when
  the window is unknown); a request never gets more than what is left of the window.
- :func:`estimate_prompt` — the last response's real prompt size (``usage``) plus an estimate
  of what was added since; the plain estimate when there is no such usage (or the history was
  replaced since).
- :class:`ContextHook` — the driver's hook: resolves the window at the turn's first request,
  compacts proactively above the threshold, compacts and retries once on ``CONTEXT_OVERFLOW``.
- :func:`fit_request` — before a request is frozen: above ``window − output limit`` compact
  first; then, if one tool result alone cannot fit, cut it (a replacing ``tool/result`` with a
  visible marker); else end the turn with ``CONTEXT_OVERFLOW`` naming the message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..errors import ModelError
from ..session.catalog import default_catalog, env_context_window
from ..session.history import MessageHistory
from ..session.session import Session
from ..wire.events import AssistantMessageEvent, ToolSchema
from ..wire.messages import AnyMessage
from .compaction import estimate_tokens, overflow_error, plan_compaction
from .compactor import MIN_SAVING
from .config import AgentConfig
from .hooks import PreStep
from .request import DerivedRequest, ModelRoute
from .steps import TurnHook, TurnRun, Window
from .trim import cut_result, largest_message

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 8192
MIN_OUTPUT = 256  # a request with less room than this for the answer is not worth sending


async def resolve_window(config: AgentConfig, route: ModelRoute, asked: dict[str, int | None]) -> Window:
    """The window of ``route``'s model and where it came from; ``asked`` caches the server's."""
    flag = config.context_window or env_context_window()
    if flag:
        return Window(flag, "flag")
    ask = getattr(route.adapter, "server_window", None)
    if ask is not None:
        if route.model_id not in asked:
            try:
                asked[route.model_id] = await ask()
            except Exception as exc:  # the server could not tell: the catalog decides
                log.info("asking %s for its window failed: %s", route.model_id, exc)
                asked[route.model_id] = None
        if asked[route.model_id]:
            return Window(asked[route.model_id], "server")
    known = default_catalog().context_window(route.provider, route.model)
    return Window(known, "catalog") if known else Window(None)


def output_limit(config: AgentConfig, window: int | None) -> int:
    """The configured limit (``max_tokens``, or a ``max_tokens`` request option), else a share of
    the window."""
    given = config.max_tokens or config.request_options.get("max_tokens")
    if isinstance(given, int) and not isinstance(given, bool) and given > 0:
        return given
    return DEFAULT_MAX_TOKENS if not window else max(1, min(DEFAULT_MAX_TOKENS, window // 4))


def estimate_prompt(session: Session, history: MessageHistory, tools: Sequence[ToolSchema] = ()) -> int:
    """The size of a request of ``history``: the last real prompt size plus what came since. The
    fold keeps the anchors (:attr:`Session.last_usage_seq`, ``last_reshape_seq``): no walk back."""
    seq, reshaped = session.last_usage_seq, session.last_reshape_seq
    if seq is not None and (reshaped is None or seq > reshaped):  # else replaced since: no longer this history
        event = session.events[seq]
        usage = event.usage if isinstance(event, AssistantMessageEvent) else None
        real = usage.input_tokens + (usage.cache_read_tokens or 0) if usage is not None else 0
        if real:
            seqs = history.seqs
            for i in range(len(seqs) - 1, -1, -1):
                if seqs[i] == seq:
                    return real + estimate_tokens(history[i:])
    return estimate_tokens(history, tools)


class ContextHook(TurnHook):
    """Resolves the window; compacts before a request would not fit and after an overflow."""

    async def before_request(self, run: TurnRun, route: ModelRoute, decision: PreStep) -> PreStep:
        agent = run.agent
        if run.window is None:
            run.window = await resolve_window(run.config, route, agent.asked_windows)
        agent.compactor.threshold = run.config.compact_threshold
        agent.compactor.window_tokens = run.window.tokens
        tools = decision.assembly.tools
        if await agent.compactor.maybe_compact(route, turn=run.turn, pending=decision.messages, tools=tools):
            decision = agent.resnapshot(decision, entered=False, turn=run.turn)
        return decision

    async def on_overflow(self, run: TurnRun, route: ModelRoute, decision: PreStep) -> PreStep | None:
        agent = run.agent
        if await agent.compactor.compact(route, turn=run.turn, trigger="context-length", tools=decision.assembly.tools):
            return agent.resnapshot(decision, entered=True, turn=run.turn)
        return None


async def fit_request(
    run: TurnRun, route: ModelRoute, decision: PreStep, derived: DerivedRequest
) -> tuple[DerivedRequest, int]:
    """The derived request made to fit the window, and the output limit it goes with."""
    window = run.window.tokens if run.window is not None else None
    limit = output_limit(run.config, window)
    if window is None:
        return derived, limit
    agent, tools = run.agent, decision.assembly.tools
    need = min(limit, MIN_OUTPUT)
    estimate = estimate_prompt(agent.session, derived.history, tools)
    if estimate + limit <= window:
        return derived, limit
    if await _compact(run, route, decision):
        derived = _rederive(run, route, decision)
        estimate = estimate_prompt(agent.session, derived.history, tools)
    if window - estimate < need:
        derived, estimate = _cut(run, route, decision, derived, window - need, estimate)
    return derived, max(1, min(limit, window - estimate))


async def _compact(run: TurnRun, route: ModelRoute, decision: PreStep) -> bool:
    """Compact first, when there is enough to summarise to be worth a request."""
    agent, window = run.agent, run.window.tokens if run.window is not None else None
    plan = plan_compaction(agent.session, run.turn, running=True)
    if plan is None or not window or estimate_tokens(plan.messages) < MIN_SAVING * window:
        return False
    if not any(m.role == "assistant" for m in plan.messages):
        return False  # only the turn's own input: summarising it would lose the task, not save room
    try:
        done = await agent.compactor.compact(route, turn=run.turn, trigger="threshold", tools=decision.assembly.tools)
    except ModelError as exc:
        log.info("compacting before an oversized request failed: %s", exc)
        return False
    if done is not None:
        agent.resnapshot(decision, entered=True, turn=run.turn)
    return done is not None


def _rederive(run: TurnRun, route: ModelRoute, decision: PreStep) -> DerivedRequest:
    return run.agent.requests.derive(route, tools=decision.assembly.tools, turn=run.turn, attempt=2)


def _cut(run: TurnRun, route: ModelRoute, decision: PreStep, derived: DerivedRequest, budget: int,
         estimate: int) -> tuple[DerivedRequest, int]:
    """Cut the largest tool result when that alone makes the request fit ``budget``; else
    ``CONTEXT_OVERFLOW`` naming the largest message."""
    session, history = run.agent.session, derived.history
    estimate = max(estimate, estimate_tokens(history, decision.assembly.tools))  # one measure for the cut
    index, size = largest_message(history)
    seq = history.seq_of(index) if index is not None else None
    excess = estimate - budget
    if index is not None and seq is not None and size - excess > 200 and cut_result(session, seq, size - excess - 100):
        derived = _rederive(run, route, decision)
        estimate = estimate_tokens(derived.history, decision.assembly.tools)
        if estimate <= budget:
            return derived, estimate
    what = _describe(history[index], seq, size) if index is not None else "the request"
    raise overflow_error(ModelError(
        f"the request does not fit the model's window ({run.window.tokens if run.window else '?'} tokens, "
        f"about {estimate} needed plus room for the answer): {what} is too large to send",
        code="CONTEXT_OVERFLOW"))


def _describe(message: AnyMessage, seq: int | None, size: int) -> str:
    kind = {"tool": "the tool result", "user": "the user message", "assistant": "the assistant message"}
    return f"{kind.get(message.role, 'the message')} at seq {seq} (about {size} tokens)"


__all__ = ["ContextHook", "Window", "estimate_prompt", "fit_request", "output_limit", "resolve_window"]
