"""Per-session options (``SessionOptions`` of ``session/create`` / ``session/resume``): the turn
budgets and the approval rules, with their defaults from the host's settings.

Unset fields keep what the session has (or take the default on creation): ``maxSteps`` defaults
to ``DSH_MAX_STEPS`` (50), ``maxTime`` to ``DSH_MAX_TIME`` (none), ``rules`` to
``DSH_POLICY_FILE`` (none); ``0`` means unbounded. A rules file is read when the option is given
(a bad one is ``BAD_RULES`` before anything changes) — edit it and resume to reload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agent.agent import Agent
from ..config import Settings, parse_max_steps, parse_max_time
from ..tools.rules import ApprovalPolicy, RuleSet, load_rules
from ..wire.endpoints import SessionOptions


def initial_budgets(settings: Settings, options: SessionOptions | None) -> tuple[int | None, float | None]:
    opts = options or SessionOptions()
    steps = settings.max_steps if opts.max_steps is None else parse_max_steps(opts.max_steps, "maxSteps")
    time = settings.max_time if opts.max_time is None else parse_max_time(opts.max_time, "maxTime")
    return steps, time


def initial_rules(settings: Settings, options: SessionOptions | None) -> RuleSet | None:
    path = (options.rules if options is not None else None) or settings.policy_file
    return load_rules(path) if path else None


def session_policy(events: Sequence[Any], rules: RuleSet | None, session_id: str) -> ApprovalPolicy:
    return ApprovalPolicy(events, rules, session_id=session_id)


def apply_options(agent: Agent, options: SessionOptions | None) -> None:
    """Change a live agent's budgets / rules (only the fields that are set)."""
    if options is None:
        return
    rules = load_rules(options.rules) if options.rules else None  # fail before changing anything
    config = agent.config  # read at each turn's start: the change applies from the next turn
    steps = parse_max_steps(options.max_steps, "maxSteps") if options.max_steps is not None else config.max_steps
    time = parse_max_time(options.max_time, "maxTime") if options.max_time is not None else config.max_time
    config.max_steps, config.max_time = steps, time
    if rules is not None and agent.approval_policy is not None:
        agent.approval_policy.rules = rules
