"""``python -m dsh_notebook policy check ID_OR_PATH [--rules FILE] [--mode NAME]`` — a dry run of
the approval rules (issue 13 item 4), or of a permission mode (issue 36 item 6), over a saved
session.

One line per ``tool/call`` of the log, in log order::

    CALLID NAME allow|deny|ask RULE

Without ``--mode``, ``RULE`` is the label of the first matching rule (``rules.json#2 bash "rm *"``),
or ``default`` when none matches (then the verdict is the tool's own ``approval``: ``allow`` for
read / glob / grep / notebook_read / inspect_var, ``ask`` for bash / write / edit / python /
notebook_insert — every tool of :func:`.registry.known_tools` — and ``ask`` for tools this
process does not know, such as an MCP server's). Only
the rules are evaluated — neither the session's mode nor its recorded answers, grants or notebook
callables — so the output says what *these rules* would do to *those calls*.

With ``--mode NAME``, each call gets what :func:`.modes.decide` — the function a live session
asks — would have decided in that mode: the rules, then the grants the log had given **before**
that call ("allow for this session" answers), then the mode. ``RULE`` is then the rule or grant
label, or ``mode:NAME`` when the mode decided. A person's recorded answers are not replayed:
what would ask says ``ask``. Bash lines are judged read-only or not as a live session judges
them; write / edit paths against the session's workspace (its ``cwd``).

The rules come from ``--rules FILE``, else ``DSH_POLICY_FILE``, else there are none. Exit 0; a
log that cannot be read or a bad rules file is a coded error (exit 2). Broken logs are read
leniently.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..config import settings_from_env
from ..redaction import redact
from ..session.inspect import resolve_target
from ..session.lenient import read_lenient
from ..wire.events import AnyEvent, PermissionMode, ToolCall
from .base import ToolSpec
from .modes import call_effect, decide
from .outcome import PolicyVerdict
from .plan import EXIT_PLAN_MODE
from .registry import known_tools
from .rules import Action, ApprovalPolicy, RuleSet, load_rules
from .sandbox import Workspace


@dataclass(frozen=True)
class Verdict:
    call_id: str
    name: str
    action: Action
    rule: str

    def line(self) -> str:
        return redact(f"{self.call_id} {self.name} {self.action} {self.rule}")  # a rule's text may hold a secret


def tool_defaults() -> dict[str, Action]:
    """Each known tool's own default (its ``approval``)."""
    return {name: t.approval for name, t in _known_tools().items()}


def check_calls(events: Iterable[AnyEvent], rules: RuleSet | None) -> list[Verdict]:
    """The verdict of ``rules`` (then the tool defaults) for every ``tool/call`` in ``events``."""
    policy = ApprovalPolicy((), rules, callables=list)
    defaults = tool_defaults()
    out = []
    for event in events:
        if not isinstance(event, ToolCall):
            continue
        hit = policy.evaluate(event.call_id, event.name, event.arguments, use_callables=False)
        if hit is None:
            out.append(Verdict(event.call_id, event.name, defaults.get(event.name, "ask"), "default"))
        else:
            out.append(Verdict(event.call_id, event.name, hit[0], hit[2]))
    return out


def _known_tools() -> dict[str, ToolSpec]:
    return {**known_tools(), EXIT_PLAN_MODE.name: EXIT_PLAN_MODE}


def _args(tool: ToolSpec | None, arguments: str) -> Any:
    if tool is None:
        return None
    try:
        return tool.args_model.model_validate(json.loads(arguments) if arguments else {})
    except (ValueError, ValidationError):
        return None  # the runtime would have refused it (INVALID_ARGS) before any policy


def check_mode_calls(events: Iterable[AnyEvent], rules: RuleSet | None, mode: PermissionMode,
                     cwd: str | None) -> list[Verdict]:
    """What ``mode`` would have decided for every ``tool/call`` of ``events`` (see the module doc)."""
    seen: list[AnyEvent] = []
    policy = ApprovalPolicy(seen, rules, callables=list)  # grants: those given before each call
    tools = _known_tools()
    workspace = Workspace(cwd) if cwd else None
    out = []
    for event in events:
        if isinstance(event, ToolCall):
            tool = tools.get(event.name)
            verdict = PolicyVerdict(tool.approval if tool is not None else "ask")
            hit = policy.evaluate(event.call_id, event.name, event.arguments, use_callables=False, tool=tool)
            if hit is not None:
                verdict = PolicyVerdict(hit[0], None, hit[1], rule=hit[2])
            effect = call_effect(tool, _args(tool, event.arguments), workspace)[0] if tool is not None else None
            decision = decide(mode, verdict, effect, event.name)
            label = decision.rule if decision.decider != "mode" and decision.rule else f"mode:{mode}"
            out.append(Verdict(event.call_id, event.name, decision.action, label))
        seen.append(event)
    return out


def verdicts(path: Any, rules_path: str | None, mode: str | None) -> tuple[list[str], list[Verdict]]:
    """The warnings of reading the log at ``path`` and the verdict for each of its tool calls:
    of the rules in ``rules_path`` (none: no rules), or of ``mode`` with them (see the module doc)."""
    rules = load_rules(rules_path) if rules_path else None
    loaded = read_lenient(path)
    if mode is None:
        return list(loaded.warnings), check_calls(loaded.events, rules)
    return list(loaded.warnings), check_mode_calls(loaded.events, rules, mode, loaded.header.cwd)  # type: ignore[arg-type]


def check_main(args: argparse.Namespace) -> int:
    """``python -m dsh_notebook policy check ID_OR_PATH [--rules FILE] [--mode NAME]``."""
    warnings, found = verdicts(resolve_target(args.target), args.rules or settings_from_env().policy_file,
                               getattr(args, "mode", None))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for verdict in found:
        print(verdict.line())
    return 0
