"""Permission modes (issue 36 items 4–5): the one decision function over every mode and kind of
call, read-only bash, arming bypass, the mode as a fact of the session, and the plan flow through
the real tool runtime (a scripted approver at the boundary answers as a person would)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.errors import UserError
from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRegistry, ToolRuntime, builtin_tools
from dsh_notebook.tools.base import ApprovalDecision, ApprovalRequest, Approver, PlanAnswer
from dsh_notebook.tools.modes import (
    LEGACY,
    MODES,
    SessionMode,
    approve_of_mode,
    bash_is_read_only,
    call_effect,
    check_mode,
    decide,
    default_mode,
    parse_mode,
)
from dsh_notebook.tools.outcome import PolicyVerdict
from dsh_notebook.tools.plan import EXIT_PLAN_MODE, parse_plan_answer, plan_text
from dsh_notebook.tools.rules import ApprovalPolicy, Rule, RuleSet
from dsh_notebook.wire.events import ApprovalAsked, ApprovalDecided, ModeChanged
from tests.tools.helpers import Frames, call

TOOL = PolicyVerdict("allow")  # the tool's default, nobody said anything
ASKS = PolicyVerdict("ask")
KINDS = ("read", "read-bash", "edit", "execute", "notebook", "plan")
# mode -> the action for each kind with no rule or grant (the table of tools/modes.py)
TABLE: dict[str, tuple[str, ...]] = {
    "default":      ("allow", "ask",   "ask",   "ask",   "ask",   "deny"),
    "accept-edits": ("allow", "allow", "allow", "ask",   "ask",   "deny"),
    "plan":         ("allow", "allow", "deny",  "deny",  "deny",  "ask"),
    "dont-ask":     ("allow", "deny",  "deny",  "deny",  "deny",  "deny"),
    "bypass":       ("allow", "allow", "allow", "allow", "allow", "deny"),
    "auto":         ("allow", "allow", "allow", "allow", "ask",   "deny"),
}  # fmt: skip


@pytest.mark.parametrize("mode", list(TABLE))
def test_every_mode_decides_every_kind_of_call_as_its_table_says(mode: str) -> None:
    for kind, want in zip(KINDS, TABLE[mode], strict=True):
        default = ASKS if kind != "read" else TOOL  # the tools' own defaults
        got = decide(mode, default, kind, "t")  # type: ignore[arg-type]
        assert (kind, got.action) == (kind, want)
        assert got.decider == "mode" and got.by == "mode"


def test_a_deny_rule_holds_in_every_mode_bypass_included() -> None:
    denied = PolicyVerdict("deny", "rules.json#1 says deny", "rule", rule='rules.json#1 bash "rm *"')
    for mode in TABLE:
        got = decide(mode, denied, "read-bash")  # type: ignore[arg-type]
        assert (got.action, got.decider, got.rule) == ("deny", "rule", 'rules.json#1 bash "rm *"'), mode


def test_rules_and_grants_around_the_modes() -> None:
    allow_rule = PolicyVerdict("allow", "r", "rule", rule="rules.json#2")
    grant = PolicyVerdict("allow", "g", "session", rule='session bash "ls *"')
    ask_rule = PolicyVerdict("ask", "a", "rule", rule="rules.json#3")
    # an explicit allow runs what would ask, and names what decided
    assert (decide("default", allow_rule, "execute").action, decide("default", allow_rule, "execute").decider) == ("allow", "rule")
    assert decide("dont-ask", grant, "read-bash").decider == "grant"
    # but a plan is only reads, whatever a rule says
    assert (decide("plan", allow_rule, "edit").action, decide("plan", allow_rule, "edit").decider) == ("deny", "mode")
    # an ask rule asks even for a read; dont-ask denies it (the mode decided); bypass runs it
    assert decide("accept-edits", ask_rule, "read").action == "ask"
    refused = decide("dont-ask", ask_rule, "read")
    assert (refused.action, refused.decider) == ("deny", "mode") and "rules.json#3 says ask" in (refused.reason or "")
    assert decide("bypass", ask_rule, "edit").action == "allow"
    # notebook_insert: no rule, grant or callable spares a person the question (issue 37 item 7)
    for mode in ("default", "accept-edits", "auto"):
        assert decide(mode, allow_rule, "notebook").action == "ask", mode  # type: ignore[arg-type]
        assert decide(mode, grant, "notebook").action == "ask", mode  # type: ignore[arg-type]
    assert decide("bypass", TOOL, "notebook").action == "allow"


@pytest.mark.parametrize(("line", "read_only"), [
    ("ls -la", True), ("cat README.md | head -n 3", True), ('grep -rn "a && b" src | head', True),
    ("wc -l src/*.ts", True), ("ls && pwd", True),
    ("git status --short", False),  # without a workspace to check: git may run the repository's programs
    ("ls > out.txt", False), ("touch x", False), ("ls; rm -rf build", False), ("ls $(touch G1)", False),
    ("echo `id`", False), ("""n=$'a[\\x24(touch G1)]'; ls <"${!n}\"""", False), ("ls &", True),
    ("cat <<EOF\nx\nEOF", True), ("cat <<EOF\n$(id)\nEOF", False), ("sed -i s/a/b/ f", False),
    ("find . -delete", False), ("sudo ls", False), ("X=1 ls", False), ("env ls", False), ("", False), ("(ls)", True),
])
def test_read_only_bash_is_conservative(line: str, read_only: bool) -> None:
    assert bash_is_read_only(line) is read_only


def test_git_is_read_only_only_in_a_repository_whose_config_runs_nothing(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    assert bash_is_read_only("git status --short", tmp_path) is True
    assert bash_is_read_only("git -C . status", tmp_path) is False and bash_is_read_only("env git status", tmp_path) is False
    subprocess.run(["git", "-C", str(tmp_path), "config", "filter.x.clean", "touch M"], check=True, env=env)
    assert bash_is_read_only("git status --short", tmp_path) is False


def test_an_edit_counts_as_one_only_inside_the_workspace_and_outside_git(tmp_path: Path) -> None:
    from dsh_notebook.tools.builtin.files import EditArgs, WriteArgs, edit_tool, write_tool
    from dsh_notebook.tools.sandbox import Workspace

    ws = Workspace(tmp_path)
    (tmp_path / ".git").mkdir()
    inside = WriteArgs(file_path="src/a.ts", content="x")
    assert call_effect(write_tool, inside, ws) == ("edit", None)
    kind, note = call_effect(write_tool, WriteArgs(file_path=".git/config", content="[core]\nfsmonitor = x"), ws)
    assert kind == "execute" and ".git" in (note or "")
    kind, note = call_effect(edit_tool, EditArgs(file_path="../elsewhere.txt", old_string="a", new_string="b"), ws)
    assert kind == "execute" and "outside" in (note or "")
    assert decide("accept-edits", ASKS, "execute").action == "ask"  # so accept-edits asks for those


def test_bypass_must_be_armed_and_names_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_ALLOW_BYPASS", raising=False)
    with pytest.raises(UserError) as err:
        parse_mode("bypass")
    assert err.value.code == "BYPASS_NOT_ARMED" and "DSH_ALLOW_BYPASS=1" in err.value.message
    with pytest.raises(UserError) as bad:
        parse_mode("acceptEdits")
    assert bad.value.code == "BAD_MODE" and "accept-edits" in bad.value.message
    monkeypatch.setenv("DSH_ALLOW_BYPASS", "1")
    assert parse_mode("bypass") == "bypass"
    check_mode("bypass")
    assert [parse_mode(m) for m in MODES] == list(MODES)


def test_the_legacy_approve_maps_onto_the_modes() -> None:
    assert LEGACY == {"ask": "default", "deny": "dont-ask", "auto": "auto"}
    assert [approve_of_mode(m) for m in (*MODES, "auto")] == ["ask", "ask", "ask", "deny", "auto", "auto"]
    assert default_mode("/tmp/dsh-demo-abc/demo") == "auto" and default_mode("/home/me/project") == "default"


def test_the_mode_is_a_fact_of_the_session(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_ALLOW_BYPASS", raising=False)
    session = Session("s_modes", cwd=str(ws))
    modes = SessionMode(session, "default")
    seen: list[tuple[str, str]] = []
    modes.subscribe(lambda now, before: seen.append((before, now)))
    assert modes.change("plan", by="notebook") is not None
    assert modes.change("plan", by="notebook") is None  # already: nothing logged
    with pytest.raises(UserError):
        modes.change("bypass", by="widget")  # not armed: refused, nothing logged
    changed = [e for e in session.events if isinstance(e, ModeChanged)]
    assert [(e.previous, e.mode, e.by) for e in changed] == [("default", "plan", "notebook")] and seen == [("default", "plan")]
    assert SessionMode(session, "default").current == "plan"  # a resumed session keeps its mode


class PlanPerson(Approver):
    """The person at the boundary: answers each ask in turn; plan answers carry mode / feedback."""

    name = "person"

    def __init__(self, *answers: tuple[ApprovalDecision, PlanAnswer | None]) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []
        self._plan: dict[str, PlanAnswer | None] = {}

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        decision, plan = self.answers.pop(0)
        self._plan[request.call_id] = plan
        return decision

    def plan_answer(self, call_id: str) -> PlanAnswer | None:
        return self._plan.pop(call_id, None)


def _runtime(ws: Path, session: Session, approver: Approver, mode: str, frames: Frames, **kw: Any) -> ToolRuntime:
    modes = SessionMode(session, mode)  # type: ignore[arg-type]
    return ToolRuntime(ToolRegistry([*builtin_tools(), EXIT_PLAN_MODE]), workspace=ws, session=session,
                       frames=frames, approver=approver, modes=modes, **kw)


async def test_plan_then_feedback_then_approval_continues_in_accept_edits(ws: Path, frames: Frames) -> None:
    (ws / "a.txt").write_text("one\n")
    session = Session("s_plan", cwd=str(ws))
    person = PlanPerson(("deny", PlanAnswer(feedback="also update b.txt")), ("allow", PlanAnswer(mode="accept-edits")))
    rt = _runtime(ws, session, person, "plan", frames)
    write = {"file_path": "a.txt", "content": "two\n"}
    refused = await rt.run(call("write", write, "w0"))
    assert refused.code == "DENIED" and "plan mode: only reads run" in refused.text and (ws / "a.txt").read_text() == "one\n"
    assert (await rt.run(call("read", {"file_path": "a.txt"}, "r1"))).code is None
    back = await rt.run(call("exit_plan_mode", {"plan": "1. write a.txt"}, "p1"))
    assert back.code == "DENIED" and "keep planning" in back.text and "also update b.txt" in back.text
    assert rt.modes.current == "plan"
    approved = await rt.run(call("exit_plan_mode", {"plan": "1. write a.txt\n2. update b.txt"}, "p2"))
    assert approved.code is None and "now in accept-edits mode" in approved.text
    assert rt.modes.current == "accept-edits"
    assert (await rt.run(call("write", write, "w1"))).code is None and (ws / "a.txt").read_text() == "two\n"  # no ask
    assert [r.call_id for r in person.requests] == ["p1", "p2"]  # the person saw the plans, nothing else
    assert person.requests[0].mode == "plan"
    decided = {e.call_id: e for e in session.events if isinstance(e, ApprovalDecided)}
    assert (decided["w0"].mode, decided["w0"].decider, decided["w0"].decision) == ("plan", "mode", "deny")
    assert (decided["p1"].decider, decided["p1"].feedback, decided["p1"].next_mode) == ("user", "also update b.txt", None)
    assert (decided["p2"].decider, decided["p2"].next_mode) == ("user", "accept-edits")
    assert (decided["w1"].mode, decided["w1"].by) == ("accept-edits", "mode")
    [changed] = [e for e in session.events if isinstance(e, ModeChanged)]
    assert (changed.previous, changed.mode, changed.by, changed.call_id) == ("plan", "accept-edits", "plan", "p2")
    asked = [e for e in session.events if isinstance(e, ApprovalAsked)]
    assert [(e.call_id, e.mode, e.decider) for e in asked] == [("p1", "plan", "mode"), ("p2", "plan", "mode")]


@pytest.mark.integration  # the bash call starts bwrap
async def test_every_call_that_reaches_the_policy_has_one_recorded_decision(ws: Path, frames: Frames) -> None:
    session = Session("s_each", cwd=str(ws))
    rules = RuleSet([Rule(tool="bash", pattern="rm *", action="deny"), Rule(tool="bash", pattern="echo *", action="allow")])
    person = PlanPerson(("allow", None))
    rt = _runtime(ws, session, person, "default", frames, pre_execute=[ApprovalPolicy(session.events, rules, callables=list).pre_execute])
    for cid, name, args in [("a", "read", {"file_path": "nope.txt"}), ("b", "bash", {"command": "rm -rf x"}),
                            ("c", "bash", {"command": "echo hi"}), ("d", "write", {"file_path": "n.txt", "content": ""}),
                            ("e", "grep", {"pattern": "x"})]:
        await rt.run(call(name, args, cid))
    decided = [(e.call_id, e.decision, e.decider, e.mode) for e in session.events if isinstance(e, ApprovalDecided)]
    assert decided == [("a", "allow", "mode", "default"), ("b", "deny", "rule", "default"), ("c", "allow", "rule", "default"),
                       ("d", "allow", "user", "default"), ("e", "allow", "mode", "default")]
    assert not any(isinstance(e, ApprovalAsked) and e.call_id != "d" for e in session.events)


async def test_outside_plan_mode_exit_plan_mode_is_refused_and_nothing_changes(ws: Path, frames: Frames) -> None:
    session = Session("s_noplan", cwd=str(ws))
    rt = _runtime(ws, session, PlanPerson(), "accept-edits", frames)
    out = await rt.run(call("exit_plan_mode", {"plan": "x"}, "p"))
    assert out.code == "DENIED" and "ends plan mode" in out.text and rt.modes.current == "accept-edits"


def test_a_typed_answer_to_a_plan() -> None:
    assert parse_plan_answer("a") == ("allow", "accept-edits", None)
    assert parse_plan_answer(" default ") == ("allow", "default", None)
    assert parse_plan_answer("n") == ("deny", None, None)
    assert parse_plan_answer("add tests first") == ("deny", None, "add tests first")
    shown = plan_text(json.dumps({"plan": "1. edit\n2. rm \u202e-rf"}))
    assert shown.splitlines() == ["1. edit", "2. rm \\u202e-rf"]  # line by line, nothing hidden
