"""Per-session options (``SessionOptions`` of ``session/create`` / ``session/resume``): the turn
budgets and the approval rules, with their defaults from the host's settings.

Unset fields keep what the session has (or take the default on creation): ``maxSteps`` defaults
to ``DSH_MAX_STEPS`` (50), ``maxTime`` to ``DSH_MAX_TIME`` (none), ``rules`` to
``DSH_POLICY_FILE`` (none); ``0`` means unbounded. A rules file is read when the option is given
(a bad one is ``BAD_RULES`` before anything changes) — edit it and resume to reload.

Issue 20: the request plan — output limit (``maxTokens``, default ``DSH_MAX_TOKENS``), request
options (merged, a ``null`` removes one), the tools offered, the no-progress guard — and the model
timeouts (``firstByteTimeout`` / ``idleTimeout``). :func:`apply_plan` is the one function that
hands the plan to the agent.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import JsonValue

from ..agent.agent import Agent
from ..agent.toolset import check_tool_names
from ..config import (
    Settings,
    parse_max_repeats,
    parse_max_steps,
    parse_max_time,
    parse_max_tokens,
    parse_model_id,
    parse_timeout,
)
from ..context import HarnessContext
from ..errors import DshError
from ..models.base import HttpAdapter, ModelAdapter
from ..models.request_options import merge_options, parse_options, parse_tools, tools_text
from ..session.catalog import context_window, env_context_window
from ..tools.rules import ApprovalPolicy, RuleSet, load_rules
from ..wire.endpoints import RequestInfo, SessionOptions, WindowSource


def initial_budgets(settings: Settings, options: SessionOptions | None) -> tuple[int | None, float | None]:
    opts = options or SessionOptions()
    steps = settings.max_steps if opts.max_steps is None else parse_max_steps(opts.max_steps, "maxSteps")
    time = settings.max_time if opts.max_time is None else parse_max_time(opts.max_time, "maxTime")
    return steps, time


def initial_rules(settings: Settings, options: SessionOptions | None) -> RuleSet | None:
    path = (options.rules if options is not None else None) or settings.policy_file
    return load_rules(path) if path else None


def session_policy(events: Sequence[Any], rules: RuleSet | None, session_id: str,
                   workspace: str | None = None) -> ApprovalPolicy:
    return ApprovalPolicy(events, rules, session_id=session_id, workspace=workspace)


def apply_options(agent: Agent, options: SessionOptions | None) -> None:
    """Change a live agent's budgets / rules / request plan / timeouts (only the fields set)."""
    if options is None:
        return
    rules = load_rules(options.rules) if options.rules else None  # fail before changing anything
    plan = changed_plan(plan_of(agent), options)
    apply_plan(agent, plan)  # the config is read at each turn's start: changes apply from the next turn
    apply_timeouts(agent, options)
    config = agent.config
    steps = parse_max_steps(options.max_steps, "maxSteps") if options.max_steps is not None else config.max_steps
    time = parse_max_time(options.max_time, "maxTime") if options.max_time is not None else config.max_time
    config.max_steps, config.max_time = steps, time
    if rules is not None and agent.approval_policy is not None:
        agent.approval_policy.rules = rules


# --- issue 20: what every request carries, and how long the model may take ----------------------


@dataclass(frozen=True)
class RequestPlan:
    """The model-facing settings of a session: the output limit (``None``: derived from the
    window by the agent), the request options, the tools offered (``None``: all; ``()``: none),
    the no-progress guard (``None``: the agent's default)."""

    max_tokens: int | None = None
    request_options: dict[str, JsonValue] = field(default_factory=dict)
    tools: tuple[str, ...] | None = None
    max_repeats: int | None = None


def check_request_options(options: SessionOptions | None) -> None:
    """Every issue-20 field of ``options`` checked (coded ``BAD_CONFIG``) before anything changes."""
    if options is None:
        return
    parse_max_tokens(options.max_tokens, "maxTokens")
    parse_options(options.options, "options")
    parse_tools(options.tools, "tools")
    parse_max_repeats(options.max_repeats, "maxRepeats")
    parse_timeout(options.first_byte_timeout, "firstByteTimeout")
    parse_timeout(options.idle_timeout, "idleTimeout")


def check_offered_tools(options: SessionOptions | None, context: HarnessContext, agent: Agent | None = None) -> None:
    """``BAD_TOOLS`` when ``options.tools`` names a tool that is not there (for ``agent``, or for a
    new session under ``context``), before anything is made or changed."""
    if options is None or options.tools is None:
        return
    tools = parse_tools(options.tools, "tools")
    if agent is not None:
        check_tool_names(tools, agent.context, agent.tools)
    else:
        check_tool_names(tools, context)


def session_settings(settings: Settings, options: SessionOptions | None) -> Settings:
    """``settings`` with the session's model timeouts and output limit (for its adapters)."""
    if options is None:
        return settings
    check_request_options(options)
    return replace(
        settings,
        max_tokens=options.max_tokens or settings.max_tokens,
        first_byte_timeout=options.first_byte_timeout or settings.first_byte_timeout,
        idle_timeout=options.idle_timeout or settings.idle_timeout,
    )


def initial_plan(settings: Settings, options: SessionOptions | None) -> RequestPlan:
    check_request_options(options)
    opts = options or SessionOptions()
    request_options = parse_options(opts.options, "options")
    return RequestPlan(
        max_tokens=opts.max_tokens or settings.max_tokens,
        request_options={k: v for k, v in request_options.items() if v is not None},
        tools=parse_tools(opts.tools, "tools"),
        max_repeats=opts.max_repeats,
    )


def changed_plan(current: RequestPlan, options: SessionOptions) -> RequestPlan:
    """``current`` with the fields ``options`` sets (options merged; ``null`` removes one)."""
    check_request_options(options)
    return RequestPlan(
        max_tokens=current.max_tokens if options.max_tokens is None else options.max_tokens,
        request_options=merge_options(current.request_options, parse_options(options.options, "options")),
        tools=current.tools if options.tools is None else parse_tools(options.tools, "tools"),
        max_repeats=current.max_repeats if options.max_repeats is None else options.max_repeats,
    )


def plan_of(agent: Agent) -> RequestPlan:
    """The plan a live agent runs with (read back from its :class:`AgentConfig`)."""
    cfg = agent.config
    return RequestPlan(cfg.max_tokens, dict(cfg.request_options), cfg.tools, cfg.max_repeats)


def apply_plan(agent: Agent, plan: RequestPlan) -> None:
    """The one place the plan reaches the agent (from the next request on)."""
    cfg = agent.config
    agent.config = replace(cfg, request_options=dict(plan.request_options), max_tokens=plan.max_tokens,
                           tools=plan.tools,
                           max_repeats=cfg.max_repeats if plan.max_repeats is None else plan.max_repeats)


def apply_timeouts(agent: Agent, options: SessionOptions, adapters: Sequence[ModelAdapter] = ()) -> None:
    """New first-byte / idle timeouts on the adapters a live agent holds (and ``adapters``)."""
    for adapter in [*agent._adapters.values(), *adapters]:
        if not isinstance(adapter, HttpAdapter):  # an in-process model has no timeouts
            continue
        if options.first_byte_timeout:
            adapter.first_byte_timeout = options.first_byte_timeout
        if options.idle_timeout:
            adapter.idle_timeout = options.idle_timeout


_first_adapter: weakref.WeakKeyDictionary[Agent, HttpAdapter] = weakref.WeakKeyDictionary()
_probing: weakref.WeakKeyDictionary[Agent, asyncio.Task[None]] = weakref.WeakKeyDictionary()


def watch_window(agent: Agent, adapter: ModelAdapter | None) -> None:
    """Ask ``adapter``'s server for its window now, in the background (host loop), so that
    ``session/info`` (``%dsh config``) knows it before the first request. Never fails."""
    if not isinstance(adapter, HttpAdapter) or not adapter.probe_window:
        return
    _first_adapter[agent] = adapter

    async def probe() -> None:
        try:
            await adapter.server_window()
        except Exception:  # a server that is not up yet: the first request will say why
            pass

    _probing[agent] = asyncio.get_running_loop().create_task(probe())


async def window_known(agent: Agent, timeout: float = 5.0) -> None:
    """Wait (at most ``timeout`` s) for the window probe :func:`watch_window` started."""
    task = _probing.get(agent)
    if task is not None and not task.done():
        await asyncio.wait({task}, timeout=timeout)


def request_info(agent: Agent) -> RequestInfo:
    """What ``session/info`` says about the requests: limits, options, tools, window and source."""
    plan = plan_of(agent)
    held = agent._adapters.get(agent.model)
    adapter = _first_adapter.get(agent) if held is None else held if isinstance(held, HttpAdapter) else None
    window, source = window_of(agent, adapter)
    return RequestInfo(
        max_tokens=plan.max_tokens, options=plan.request_options, tools=tools_text(plan.tools),
        max_repeats=plan.max_repeats,
        first_byte_timeout=adapter.first_byte_timeout if adapter is not None else None,
        idle_timeout=adapter.idle_timeout if adapter is not None else None,
        context_window=window, window_source=source,
    )


def window_of(agent: Agent, adapter: HttpAdapter | None) -> tuple[int | None, WindowSource | None]:
    """The window a live agent's model has and where it came from: ``flag`` (``--context-window``
    / ``DSH_CONTEXT_WINDOW``), ``server`` (asked before: never asks here), ``catalog``."""
    flag = agent.config.context_window
    if flag is None:
        try:
            flag = env_context_window()
        except DshError:
            flag = None
    if flag:
        return flag, "flag"
    known = adapter.known_window() if adapter is not None else None
    if known:
        return known, "server"
    try:
        provider, model = parse_model_id(agent.model)
        window = context_window(provider, model)
    except DshError:
        window = None
    return (window, "catalog") if window else (None, None)
