"""Approval policies (issue 13 item 4): rules files, grants, ``policy check`` — real tools, the
CLI in a subprocess, the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.errors import UserError
from dsh_notebook.tools.rules import ApprovalPolicy, Rule, RuleSet, grant_for, load_rules
from dsh_notebook.wire.events import ApprovalDecided, ToolResult
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log

RULES = [
    {"tool": "bash", "pattern": "rm *", "action": "deny"},
    {"tool": "bash", "pattern": "git status*", "action": "allow"},
    {"tool": "write", "pattern": "src/*", "action": "ask"},
    {"tool": "*", "pattern": "secrets/*", "action": "deny"},
]
CALLS = [
    ("call_rm", "bash", {"command": "rm -rf build"}),
    ("call_git", "bash", {"command": "git status --short"}),
    ("call_chain", "bash", {"command": "git status; echo chained"}),
    ("call_read", "read", {"file_path": "README.md"}),
    ("call_secret", "read", {"file_path": "secrets/key.txt"}),
    ("call_write", "write", {"file_path": "src/new.ts", "content": "export {}\n"}),
    ("call_ls", "bash", {"command": "ls"}),
]


def _rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES))
    return path


def test_rules_first_match_wins_and_an_allow_never_covers_a_chained_command(tmp_path: Path) -> None:
    rules = load_rules(_rules_file(tmp_path))
    policy = ApprovalPolicy((), rules, callables=list)
    verdicts = {cid: policy.evaluate(cid, name, json.dumps(args)) for cid, name, args in CALLS}
    assert verdicts["call_rm"] == ("deny", "rule", 'rules.json#1 bash "rm *"')
    assert verdicts["call_git"] == ("allow", "rule", 'rules.json#2 bash "git status*"')
    assert verdicts["call_chain"] is None  # `git status; echo chained` is not allowed by `git status*`
    assert verdicts["call_secret"] == ("deny", "rule", 'rules.json#4 * "secrets/*"')
    assert verdicts["call_write"] == ("ask", "rule", 'rules.json#3 write "src/*"')
    assert verdicts["call_read"] is None and verdicts["call_ls"] is None


@pytest.mark.parametrize(("content", "where"), [
    ("not json", "not readable JSON"), ('{"tool": "bash"}', "JSON list"),
    ('[{"tool": "bash", "action": "maybe"}]', "rule 1: action"), ('[{"tool": "bash", "pattern": "x", "action": "deny", "extra": 1}]', "rule 1: extra"),
])
def test_a_bad_rules_file_is_a_coded_error(tmp_path: Path, content: str, where: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UserError) as info:
        load_rules(path)
    assert info.value.code == "BAD_RULES" and where in info.value.message
    with pytest.raises(UserError):
        load_rules(tmp_path / "missing.json")


def test_a_grant_is_a_read_only_name_or_the_exact_command_for_bash_and_the_whole_tool_otherwise() -> None:
    assert grant_for("bash", json.dumps({"command": "git status --short"})).pattern == "git status *"
    # issue 21: a name only for read-only commands, else the exact command
    assert grant_for("bash", json.dumps({"command": "pytest -x tests"})).pattern == "pytest -x tests"
    assert grant_for("bash", json.dumps({"command": "git --no-pager log"})).pattern == "git --no-pager log"
    assert grant_for("write", json.dumps({"file_path": "a.txt", "content": ""})).pattern == "*"
    rules = RuleSet([Rule(tool="bash", pattern="git status *", action="allow")])
    policy = ApprovalPolicy((), rules, callables=list)
    assert policy.evaluate("c", "bash", json.dumps({"command": "git status"})) is not None  # the bare prefix
    assert policy.evaluate("c", "bash", json.dumps({"command": "git statusx"})) is None


def _saved_session(tmp_path: Path, home: Path, *extra: str) -> tuple[str, Path, FakeOpenAIServer]:
    """A session whose calls went through ``--approve deny``: only what a rule (or the tool's
    default) allows runs — never the test's `rm`, whatever happens to the rules."""
    (tmp_path / "README.md").write_text("# readme\n")
    server = FakeOpenAIServer()
    with server:
        server.enqueue(tool_call_reply([(cid, name, json.dumps(args)) for cid, name, args in CALLS]),
                       text_reply("done"))
        done = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                       "--approve", "deny", *extra, "do things", home=home)
    assert done.returncode == 0, done.stderr
    sid, log = session_of(done.stdout)
    return sid, log, server


def test_rules_decide_in_a_live_run_and_every_decision_names_its_rule(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "build").mkdir()
    _sid, log, server = _saved_session(tmp_path, home, "--rules", str(_rules_file(tmp_path)))
    events = assert_valid_log(log)
    decided = {e.call_id: e for e in events if isinstance(e, ApprovalDecided)}
    assert (decided["call_rm"].decision, decided["call_rm"].by, decided["call_rm"].rule) == (
        "deny", "rule", 'rules.json#1 bash "rm *"')
    assert (decided["call_git"].decision, decided["call_git"].by) == ("allow", "rule")
    assert decided["call_secret"].decision == "deny"
    results = {e.message.tool_call_id: e.message for e in events if isinstance(e, ToolResult)}
    assert results["call_rm"].is_error and "rules.json#1" in results["call_rm"].text
    assert (tmp_path / "build").is_dir()  # the denied rm never ran
    # no rule: the mode (--approve deny is dont-ask) denies what default would ask — bash, `ls` too
    assert results["call_ls"].is_error and "mode is dont-ask" in results["call_ls"].text
    assert (decided["call_ls"].by, decided["call_ls"].decider) == ("mode", "mode")
    assert results["call_chain"].is_error and "dont-ask" in results["call_chain"].text
    assert {e.mode for e in decided.values()} == {"dont-ask"}
    assert not results["call_git"].is_error or "not a git repository" in results["call_git"].text  # it ran
    tool_messages = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert len(tool_messages) == len(CALLS)  # every call answered in the next request


def test_policy_check_prints_one_verdict_per_call_of_a_saved_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid, log, _server = _saved_session(tmp_path, home)
    rules = _rules_file(tmp_path)
    done = run_cli("policy", "check", sid, "--rules", str(rules), home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'call_rm bash deny rules.json#1 bash "rm *"',
        'call_git bash allow rules.json#2 bash "git status*"',
        "call_chain bash ask default",
        "call_read read allow default",
        'call_secret read deny rules.json#4 * "secrets/*"',
        'call_write write ask rules.json#3 write "src/*"',
        "call_ls bash ask default",
    ]
    by_path_env = run_cli("policy", "check", str(log), home=home, extra_env={"DSH_POLICY_FILE": str(rules)})
    assert by_path_env.returncode == 0 and by_path_env.stdout == done.stdout
    no_rules = run_cli("policy", "check", str(log), home=home)
    assert no_rules.stdout.splitlines()[0] == "call_rm bash ask default"
    bad = run_cli("policy", "check", "s_nope", home=home)
    assert bad.returncode == 2 and "LOG_NOT_FOUND" in bad.stderr
