"""Issue 36's table: every command line of :mod:`tests.tools.shell_cases` × deny rule × ask rule ×
allow rule × grant, with the verdict it must get — through the public policy API, a real
ToolRuntime for the asked ones, and ``/bin/bash`` itself for every line the parser resolves."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRuntime, builtin_tools
from dsh_notebook.tools.grants import bash_grant_for, glob_escape, is_read_only
from dsh_notebook.tools.registry import ToolRegistry
from dsh_notebook.tools.rules import ApprovalPolicy, Rule, RuleSet, grant_for
from dsh_notebook.tools.shell_parse import parse_line
from dsh_notebook.wire.events import ApprovalAsked, ApprovalDecided, Grant
from tests.tools.bash_oracle import HOME, bash_runs
from tests.tools.helpers import FakeApprover, call
from tests.tools.shell_cases import CASES, EXACT, READ_ONLY_GRANTS, Case

UNRESOLVED = [c for c in CASES if c.why is not None]
RESOLVED = [c for c in CASES if c.why is None]


def _rules(pattern: str, action: str) -> RuleSet:
    return RuleSet([Rule(tool="bash", pattern=pattern, action=action)], "rules.json")  # type: ignore[arg-type]


def _granted(patterns: list[str], workspace: Path) -> ApprovalPolicy:
    events = [ApprovalDecided(seq=k, time=0, call_id=f"g{k}", name="bash", decision="allow", by="host:cli",
                              rule=f'session bash "{p}"', grant=Grant(tool="bash", pattern=p))
              for k, p in enumerate(patterns)]
    return ApprovalPolicy(events, None, callables=list, workspace=workspace)


def test_the_table_holds_the_issue_s_lines() -> None:
    lines = {c.line for c in CASES}
    assert len(CASES) >= 150 and len(lines) == len(CASES)
    assert len(UNRESOLVED) >= 100 and len(RESOLVED) >= 100
    for must in ("n=$'a[\\x24(touch G1)]'; ls <\"${!n}\"", "hash -p /usr/bin/touch ls; ls X",
                 "mapfile -C 'touch X #' -c 1 <<< x", "printf -v 'a[x]' 1", "ls -la", "git status --short",
                 "pytest -q tests/", 'grep -rn "a && b" src | head', 'git commit -m "a && b"'):
        assert must in lines


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_parser_resolves_only_what_it_knows(case: Case) -> None:
    line = parse_line(case.line)
    if case.why is None:
        assert line.unresolved is None and line.commands
    else:
        assert line.unresolved is not None and case.why in line.unresolved


@pytest.mark.parametrize("case", CASES, ids=str)
def test_each_line_gets_its_verdict_under_deny_ask_and_allow_rules(case: Case) -> None:
    hit = case.why is not None or case.touch
    assert _rules("touch *", "deny").match("bash", case.line) == (("deny", 'rules.json#1 bash "touch *"') if hit else None)
    assert _rules("touch *", "ask").match("bash", case.line) == (("ask", 'rules.json#1 bash "touch *"') if hit else None)
    unrelated = _rules("rm -rf /", "deny").match("bash", case.line)
    assert (unrelated is not None) is (case.why is not None)  # unresolved: every deny rule matches
    allowed = _rules("*", "allow").match("bash", case.line)
    assert (allowed is not None) is (case.why is None and not case.writes)
    if not any(c in case.line for c in "*?["):  # a pattern without wildcards allows the line itself
        exact = _rules(case.line.strip(), "allow").match("bash", case.line)
        assert (exact is not None) is (case.why is None and not case.writes)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_the_grant_offered_and_what_grants_cover(case: Case, tmp_path: Path) -> None:
    offered = bash_grant_for(case.line)
    want = glob_escape(case.line.strip()) if case.grant == EXACT else case.grant
    assert (offered.pattern if offered else None) == (None if case.why else want)
    assert grant_for("bash", json.dumps({"command": case.line})) == offered
    # every read-only name, the line's own exact grant and a bare `*`: an unresolved line stays unallowed
    patterns = [*READ_ONLY_GRANTS, glob_escape(case.line.strip()), "*"]
    hit = _granted(patterns, tmp_path).evaluate("c", "bash", json.dumps({"command": case.line}))
    if case.why is not None or case.writes:
        assert hit is None
    elif case.grant is not None:
        assert hit is not None and hit[0] == "allow" and hit[1] == "session"
        own = _granted([want], tmp_path).evaluate("c", "bash", json.dumps({"command": case.line}))
        assert own is not None and own[0] == "allow"  # the grant offered covers the line


@pytest.mark.parametrize("case", CASES, ids=str)
def test_read_only_is_what_the_table_says(case: Case) -> None:
    assert is_read_only(parse_line(case.line)) is case.ro


async def test_every_unresolved_line_is_asked_with_its_reason_or_denied_by_a_deny_rule(
        ws: Path, session: Session) -> None:
    """A real ToolRuntime with the session's policy (every read-only grant held): each unresolved
    line reaches the approver with "unresolved: …" and runs nothing (the approver says no);
    under a deny rule it is denied without asking."""
    approver = FakeApprover(*["deny"] * len(UNRESOLVED))
    policy = _granted(READ_ONLY_GRANTS, ws)
    runtime = ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=session, policy_mode="ask",
                          approver=approver)
    runtime.pre_execute.insert(0, policy.pre_execute)
    for k, case in enumerate(UNRESOLVED):
        out = await runtime.run(call("bash", {"command": case.line}, f"u{k}"))
        assert out.code == "DENIED", case
    assert [r.call_id for r in approver.requests] == [f"u{k}" for k in range(len(UNRESOLVED))]
    for request, case in zip(approver.requests, UNRESOLVED, strict=True):
        assert request.reason is not None and request.reason.startswith("unresolved: ") and case.why in request.reason
    asked = {e.call_id: e.reason for e in session.events if isinstance(e, ApprovalAsked)}
    assert all(asked[f"u{k}"] == approver.requests[k].reason for k in range(len(UNRESOLVED)))
    assert os.listdir(ws) == []  # nothing ran

    policy.rules = _rules("rm -rf /", "deny")
    before = len(approver.requests)
    for k, case in enumerate(UNRESOLVED[:20]):
        out = await runtime.run(call("bash", {"command": case.line}, f"d{k}"))
        assert out.code == "DENIED" and "unresolved: " in out.text
    assert len(approver.requests) == before  # denied by the rule, nobody asked
    denied = [e for e in session.events if isinstance(e, ApprovalDecided) and e.call_id.startswith("d")]
    assert len(denied) == 20 and all(e.decision == "deny" and e.by == "rule" for e in denied)


@pytest.mark.parametrize("case", [c for c in RESOLVED if c.oracle], ids=str)
def test_bash_runs_exactly_what_the_parser_reports(case: Case, tmp_path: Path) -> None:
    """A grammar is not bash: /bin/bash itself, with every command recorded instead of run."""
    line = parse_line(case.line)
    inputs = [r.target for r in line.redirects if r.op == "<"]
    ran = bash_runs(case.line, tmp_path, inputs)
    words = {cmd: tuple(HOME + w.text[1:] if w.dynamic else w.text for w in cmd.words) for cmd in line.commands}
    reported = Counter(words[cmd] for cmd in line.commands if "/" not in cmd.literal[0])
    assert ran, "bash ran nothing"
    assert not ran - reported, f"bash ran what the parser did not report: {ran - reported}"
    top = Counter(words[cmd] for cmd in line.commands if cmd.depth == 0 and "/" not in cmd.literal[0])
    assert not top - ran, f"the parser reported what bash never ran: {top - ran}"
