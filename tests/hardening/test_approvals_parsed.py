"""Issue 21 findings 4–6: approvals match the PARSED bash command, grants cannot be widened by a
harmless prefix, and the prompt shows the whole command — rules and grants through the public
policy API, then a real ``run`` (CLI subprocess, real bash, loopback model) and a ``%dsh`` cell
whose stdin prompt is read at the boundary. Issue 36: the variants that ran unasked under the
bashlex parser (a grant on ``ls -la``, a ``touch *`` deny rule) and the prompt's reason; the
whole table is :mod:`tests.tools.shell_cases`."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.cell.approvals import prompt_text
from dsh_notebook.tools.rules import ApprovalPolicy, Rule, RuleSet, grant_for
from dsh_notebook.wire.events import ApprovalDecided
from tests.notebook.conftest import answer_stdin, fake_flags, fake_server, shell  # noqa: F401 (fixtures)
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log

# `touch NAME` spelled every way the shell allows; {m} is the marker file each one would create
TOUCH_VARIANTS = [
    " touch {m}", "\\touch {m}", "/usr/bin/touch {m}", "command touch {m}", "true && touch {m}",
    "echo; touch {m}", "\ttouch {m}", "env touch {m}", "X=1 touch {m}", "t''ouch {m}", "$(echo touch) {m}",
    "exec touch {m}", "echo {m} | xargs touch", "nice -n 5 touch {m}", "sudo -n touch {m}", "eval touch {m}",
    "echo\ntouch {m}", "echo | touch {m}", "(touch {m})", "{{ touch {m}; }}", "cat <<EOF\nhi\nEOF\ntouch {m}",
    "bash -c 'touch {m}'", "timeout 5 touch {m}", "find . -maxdepth 0 -exec touch {m} \\;",
    "f() {{ touch {m}; }}; f", "T=touch; $T {m}", "stdbuf -o0 touch {m}", "nohup touch {m}",
    "env -i PATH=/usr/bin:/bin touch {m}", '"touch" {m}', "echo `echo hi`; touch {m}", "echo a || touch {m}",
    "echo hello" + " " * 400 + "; touch {m}", "if true; then touch {m}; fi", "for i in 1; do touch {m}; done",
    "echo | sh -c 'touch {m}'", "setsid touch {m}", "command -p touch {m}", "xargs -n1 touch < /dev/null; touch {m}",
    "env env env env env env touch {m}", "nice nice nice nice nice touch {m}", "builtin command exec touch {m}",
]  # fmt: skip
# issue 36: what ran `touch` through the bashlex parser (its variables are set in the line itself)
ISSUE_36_VARIANTS = [
    "n=$'a[\\x24(touch {m})]'; ls <\"${{!n}}\"", "n=$'a[\\x24(touch {m})]'; for x in \"${{!n}}\"; do ls; done",
    "n=$'a[\\x24(touch {m})]'; cat <<EOF\n${{!n}}\nEOF", "hash -p /usr/bin/touch ls; ls {m}",
    "mapfile -C 'touch {m} #' -c 1 <<< x", "x='b[$(touch {m})]'; printf -v 'a[x]' 1",
    "read 'PIPESTATUS[$(touch {m})]' <<< 1", "[ -v 'PIPESTATUS[$(touch {m})]' ]", "unset 'GROUPS[$(touch {m})]'",
    "echo $((a[$(touch {m})]))", "case x in x) touch {m};; esac",
]  # fmt: skip
DENY_TOUCH = RuleSet([Rule(tool="bash", pattern="touch *", action="deny")], "rules.json")


@pytest.mark.parametrize("variant", TOUCH_VARIANTS)
def test_a_deny_rule_matches_every_spelling_of_the_command(variant: str) -> None:
    assert DENY_TOUCH.match("bash", variant.format(m="MARKER")) == ("deny", 'rules.json#1 bash "touch *"')


@pytest.mark.parametrize("command", ["echo touch", "ls -la", "grep -r touch .", "cat touch.txt"])
def test_a_deny_rule_leaves_other_commands_alone(command: str) -> None:
    assert DENY_TOUCH.match("bash", command) is None


@pytest.mark.parametrize("command", ["echo $(date)", "eval ls", "source x.sh", ". x.sh", "f() { ls; }", "$CMD x",
                                     "case x in a) ls;; esac", "sh script.sh", "env -S 'ls'",
                                     "BASH_ENV=x.sh bash -c true", "env LD_PRELOAD=x.so ls", "ls\n" * 30000])
def test_what_the_parser_cannot_resolve_matches_deny_and_never_allow(command: str) -> None:
    rules = RuleSet([Rule(tool="bash", pattern="rm *", action="deny")])
    assert rules.match("bash", command) is not None
    assert RuleSet([Rule(tool="bash", pattern="*", action="allow")]).match("bash", command) is None
    assert grant_for("bash", json.dumps({"command": command})) is None  # no grant is offered


@pytest.mark.parametrize(("command", "allowed"), [
    ("git status --short", True), ("git status; touch x", False), ("git status && git status -s", True),
    ("git status > ~/.bashrc", False), ("GIT_PAGER=sh git status", False), ("sudo git status", False),
    ("git status | sh", False), ("git status\ntouch x", False),
])  # fmt: skip
def test_an_allow_rule_needs_every_simple_command_to_match(command: str, allowed: bool) -> None:
    rules = RuleSet([Rule(tool="bash", pattern="git status*", action="allow")])
    assert (rules.match("bash", command) is not None) is allowed


def _granted(command: str) -> ApprovalPolicy:
    grant = grant_for("bash", json.dumps({"command": command}))
    assert grant is not None
    decided = ApprovalDecided(seq=0, time=0, call_id="g", name="bash", decision="allow", by="host:cli",
                              rule=f'session bash "{grant.pattern}"', grant=grant)
    return ApprovalPolicy([decided], None, callables=list)


# (what was granted "for the session", what the model runs next, is it allowed without asking?)
GRANT_CASES = [
    ("git grep foo", "git grep bar src", True), ("git grep foo", "git grep --open-files-in-pager='touch x' foo", False),
    ("git grep foo", "git grep -O'touch x' foo", False), ("git grep foo", "git grep --open='touch x' foo", False),
    ("find . -name '*.py'", "find src -type f", True), ("find . -name x", "find . -exec touch x ;", False),
    ("find . -name x", "find . -delete", False), ("find . -name x", "find . -fprint out", False),
    ("sed -n 1p f", "sed -n 2,5p f", True), ("sed -n 1p f", "sed -n '1e touch x' f", False),
    ("sed -n 1p f", "sed -i s/a/b/ f", False), ("sed -n 1p f", "sed 's/a/b/w out' f", False),
    ("sed -n 1p f", "sed -n 's/a/touch x/e' f", False), ("sed -n 1p f", "sed -n 'b/;e touch x;/x/p' f", False),
    ("tar tf a.tar", "tar tvf b.tar", True), ("tar tf a.tar", "tar tf a.tar --checkpoint=1 --checkpoint-action=exec='touch x'", False),
    ("tar tf a.tar", "tar --to-command='touch x' -xf a.tar", False), ("tar tf a.tar", "tar xf a.tar", False),
    ("tar tf a.tar", "tar -I 'touch x' -tf a.tar", False), ("tar tf a.tar", "tar -t -f host:a.tar", False), ("tar tf a.tar", "tar -tf a.tar --use-compress=x", False),
    ("env", "env touch x", False), ("env", "env FOO=1 touch x", False), ("xargs echo", "xargs touch", False),
    ("timeout 5 ls", "timeout 5 touch x", False), ("nice ls", "nice touch x", False),
    ("git log", "git log --oneline", True), ("git log", "git log --output=x", False), ("git log", "git log --out=x", False),
    ("echo hi", "echo there", True), ("echo hi", "echo hi > f", False), ("echo hi", "echo $(touch x)", False),
    ("echo hi", "echo hi; touch x", False), ("cat README.md", "./cat x", False), ("cat a", "X=1 cat f", False),
    ("cat a", "cat f | sh", False), ("pytest -x tests", "pytest -x tests", True), ("pytest -x tests", "pytest tests", False),
    ("pytest -x tests", "pytest -x tests; touch x", False), ("ls", "ls | head", False), ("sort a", "sort -o f a", False),
    ("rg foo", "rg --pre 'touch x' foo", False), ("date", "date -s 2020-01-01", False),
]  # fmt: skip


@pytest.mark.parametrize(("granted", "command", "allowed"), GRANT_CASES)
def test_a_session_grant_never_covers_a_dangerous_variant(granted: str, command: str, allowed: bool) -> None:
    hit = _granted(granted).evaluate("c", "bash", json.dumps({"command": command}))
    assert (hit is not None and hit[0] == "allow") is allowed, hit


@pytest.mark.parametrize("variant", ISSUE_36_VARIANTS)
def test_what_ran_unasked_under_bashlex_is_denied_and_never_granted(variant: str) -> None:
    command = variant.format(m="MARKER")
    assert DENY_TOUCH.match("bash", command) is not None
    assert grant_for("bash", json.dumps({"command": command})) is None
    ls_granted = _granted("ls -la")  # "allow for this session" on `ls -la`: the grant `ls *`
    assert ls_granted.evaluate("c", "bash", json.dumps({"command": command})) is None


def test_touch_variants_never_run_under_approve_auto_with_a_deny_rule(tmp_path: Path) -> None:
    """The real run: `--approve auto` would run anything no rule denies, so a marker file that
    exists afterwards is a variant that got through."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"tool": "bash", "pattern": "touch *", "action": "deny"}]))
    variants = TOUCH_VARIANTS + ISSUE_36_VARIANTS
    calls = [(f"c{k}", "bash", json.dumps({"command": v.format(m=f"m{k}")})) for k, v in enumerate(variants)]
    server = FakeOpenAIServer()
    with server:
        server.enqueue(tool_call_reply(calls), text_reply("done"))
        done = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(ws),
                       "--approve", "auto", "--rules", str(rules), "touch things", home=home, timeout=240)
    assert done.returncode == 0, done.stderr
    events = assert_valid_log(session_of(done.stdout)[1])
    decided = {e.call_id: e.decision for e in events if isinstance(e, ApprovalDecided)}
    assert decided == {cid: "deny" for cid, _, _ in calls}
    assert sorted(p.name for p in ws.iterdir()) == []


@pytest.mark.integration
def test_the_stdin_prompt_shows_the_whole_command_made_visible(shell: Any, fake_server: FakeOpenAIServer,  # noqa: F811
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hidden = "echo hello" + " " * 400 + "; touch MARKER"
    bidi = "echo \u202eoof\t\x1b[2K; touch M2"
    fake_server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": hidden}))]),
                        tool_call_reply([("c2", "bash", json.dumps({"command": bidi}))]), text_reply("finished"))
    asked = answer_stdin(monkeypatch, "y", "n")
    result = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server, 'ask')} go").result
    assert result.ok and len(asked) == 2
    assert "echo hello ; touch MARKER" in asked[0]  # what `y` ran, all of it
    assert (tmp_path / "MARKER").exists()
    assert "echo \\u202eoof\\t\\x1b[2K; touch M2" in asked[1] and "\x1b" not in asked[1] and "\u202e" not in asked[1]
    assert "a: this exact bash command" in asked[0]


def test_the_prompt_says_why_a_line_is_asked(shell: Any, fake_server: FakeOpenAIServer,  # noqa: F811
                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: an unresolved line is asked with its reason, and without the `a` (grant) choice."""
    line = 'n=x; ls <"${!n}"'
    fake_server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": line}))]), text_reply("finished"))
    asked = answer_stdin(monkeypatch, "n")
    result = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server, 'ask')} go").result
    assert result.ok and len(asked) == 1
    assert '(unresolved: an assignment (n=x)) [y/N]' in asked[0]
    assert prompt_text("bash", json.dumps({"command": 'ls <"${!n}"'})).endswith(
        '? (unresolved: parameter expansion in a redirect) [y/N] ')
    assert "[y/N/a: " in prompt_text("bash", json.dumps({"command": "ls -la"}))


def test_the_terminal_prompt_of_run_says_why_too(tmp_path: Path) -> None:
    """`run --approve ask` on a terminal: the unresolved line's prompt carries its reason, the
    answer `n` denies it and nothing ran."""
    ws = tmp_path / "ws"
    ws.mkdir()
    line = "n=x; touch M <\"${!n}\""
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "DSH_API_KEY": FakeOpenAIServer.api_key or ""}
    master, slave = pty.openpty()
    server = FakeOpenAIServer()
    try:
        with server:
            server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": line}))]), text_reply("done"))
            os.write(master, b"n\n")
            done = subprocess.run([sys.executable, "-m", "dsh_notebook", "run", "--model", "fake-model", "--base-url",
                                   server.base_url, "--approve", "ask", "--cwd", str(ws), "go"], env=env, stdin=slave,
                                  capture_output=True, text=True, timeout=120, start_new_session=True, check=False)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert f"dsh: allow bash {line}? (unresolved: an assignment (n=x)) [y/N]" in done.stderr
    assert not (ws / "M").exists()
