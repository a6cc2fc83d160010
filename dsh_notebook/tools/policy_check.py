"""``python -m dsh_notebook policy check ID_OR_PATH [--rules FILE]`` — a dry run of the approval
rules over a saved session (issue 13 item 4).

One line per ``tool/call`` of the log, in log order::

    CALLID NAME allow|deny|ask RULE

``RULE`` is the label of the first matching rule (``rules.json#2 bash "rm *"``), or ``default``
when none matches (then the verdict is the tool's own: ``allow`` for read / glob / grep, ``ask``
for bash / write / edit / python and for tools this process does not know). Only the rules are
evaluated — neither the session's approval mode nor its recorded answers, grants or notebook
callables — so the output says what *these rules* would do to *those calls*. The rules come from
``--rules FILE``, else ``DSH_POLICY_FILE``, else there are none. Exit 0; a log that cannot be
read or a bad rules file is a coded error (exit 2). Broken logs are read leniently.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from ..config import settings_from_env
from ..session.inspect import resolve_target
from ..session.lenient import read_lenient
from ..wire.events import AnyEvent, ToolCall
from .registry import builtin_tools
from .rules import Action, ApprovalPolicy, RuleSet, load_rules

NOTEBOOK_TOOL_DEFAULTS: dict[str, Action] = {"python": "ask"}


@dataclass(frozen=True)
class Verdict:
    call_id: str
    name: str
    action: Action
    rule: str

    def line(self) -> str:
        return f"{self.call_id} {self.name} {self.action} {self.rule}"


def tool_defaults() -> dict[str, Action]:
    defaults: dict[str, Action] = {t.name: t.approval for t in builtin_tools()}
    return {**NOTEBOOK_TOOL_DEFAULTS, **defaults}


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


def check_main(args: argparse.Namespace) -> int:
    path = resolve_target(args.target)
    rules_path = args.rules or settings_from_env().policy_file
    rules = load_rules(rules_path) if rules_path else None
    loaded = read_lenient(path)
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for verdict in check_calls(loaded.events, rules):
        print(verdict.line())
    return 0
