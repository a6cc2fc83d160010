"""Issue 36 item 3, as attacks: a model that may write files plants a program in a real git
repository (``core.fsmonitor``, a hook, an editor, a credential helper, ``core.sshCommand``, a
clean filter, ``diff.external``, a ``textconv``, an ``include``) and then runs the git command a
grant or an allow rule lets run unasked. The marker file each planted program would write must not
appear — through the real bash tool (bubblewrap and the fallback), with the session's policy.
Each planted program is first shown to fire in plain git, so no test passes by accident."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRuntime, builtin_tools, confine
from dsh_notebook.tools.git_config import config_keys
from dsh_notebook.tools.git_guard import GIT_OVERRIDES, git_config_env, repository_refusal
from dsh_notebook.tools.registry import ToolRegistry
from dsh_notebook.tools.rules import ApprovalPolicy, Rule, RuleSet
from dsh_notebook.wire.events import ApprovalDecided, Grant
from tests.tools.helpers import FakeApprover, call

needs_bwrap = pytest.mark.skipif(confine.bubblewrap() is None, reason="no usable bubblewrap here")
PLAIN_GIT = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"GIT_TERMINAL_PROMPT": "0"}


@pytest.fixture(params=[pytest.param("bwrap", marks=needs_bwrap), "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DSH_SANDBOX", "1" if request.param == "bwrap" else "0")
    return str(request.param)


def git(ws: Path, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ws), *args], env=PLAIN_GIT, capture_output=True, text=True,
                          check=check, input=stdin, timeout=60)


@pytest.fixture
def repo(ws: Path) -> Path:
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "dev@example.com")
    git(ws, "config", "user.name", "Dev")
    (ws / "a.txt").write_text("one\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "init")
    return ws


def mark(ws: Path, name: str) -> Path:
    return ws / f"MARK-{name}"


def stale(ws: Path) -> None:
    """Change a tracked file (git status and diff then read it through filters)."""
    (ws / "a.txt").write_text("two\n")


def plant(ws: Path, kind: str) -> tuple[str, Path]:
    """Plant ``kind``; returns (the git command it fires on, its marker)."""
    m = mark(ws, kind)
    touch = f"touch {m}"
    if kind == "fsmonitor":
        git(ws, "config", "core.fsmonitor", f"{touch}; false #")
        return "git status --short", m
    if kind == "hook":
        hook = ws / ".git" / "hooks" / "pre-commit"
        hook.write_text(f"#!/bin/sh\n{touch}\n")
        hook.chmod(0o755)
        return "git commit -q --allow-empty -m x", m
    if kind == "editor":
        git(ws, "config", "core.editor", touch)
        return "git commit -q --allow-empty", m
    if kind == "credential":
        git(ws, "config", "credential.helper", f"!{touch} #")
        (ws / "req.txt").write_text("protocol=https\nhost=example.com\n\n")
        return "git credential fill < req.txt", m
    if kind == "ssh":
        git(ws, "config", "core.sshCommand", f"{touch} #")
        return "git ls-remote ssh://example.invalid/x", m
    if kind == "filter":
        (ws / ".gitattributes").write_text("a.txt filter=evil\n")
        git(ws, "config", "filter.evil.clean", f"{touch}; cat")
        stale(ws)
        return "git status --short", m
    if kind == "diff-external":
        git(ws, "config", "diff.external", f"sh -c '{touch}' --")
        stale(ws)
        return "git diff", m
    if kind == "textconv":
        (ws / ".gitattributes").write_text("a.txt diff=evil\n")
        git(ws, "config", "diff.evil.textconv", f"sh -c '{touch}; cat \"$1\"' --")
        stale(ws)
        return "git diff", m
    assert kind == "include"
    (ws / "inc.cfg").write_text(f'[core]\n\tfsmonitor = "{touch}; false #"\n[filter "evil"]\n\tclean = {touch}; cat\n')
    (ws / ".gitattributes").write_text("a.txt filter=evil\n")
    git(ws, "config", "include.path", "../inc.cfg")
    stale(ws)
    return "git status --short", m


NEUTRALISED = ["fsmonitor", "hook", "editor", "credential", "ssh"]  # overridden for every git the tool runs
REFUSED = ["filter", "diff-external", "textconv", "include"]  # the repository's config: asked instead


def fires_in_plain_git(ws: Path, command: str, marker: Path) -> None:
    """The planted program really runs when git is started without the tool's defences."""
    args = command.split()[1:]
    stdin = (ws / "req.txt").read_text() if "<" in args else None
    args = [a for a in args if a not in ("<", "req.txt")]
    git(ws, *args, check=False, stdin=stdin)
    assert marker.exists(), f"{marker.name}: the planted program never ran in plain git"
    marker.unlink()


def runtime(ws: Path, session: Session, policy: ApprovalPolicy, approver: FakeApprover) -> ToolRuntime:
    rt = ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=session, policy_mode="ask",
                     approver=approver)
    rt.pre_execute.insert(0, policy.pre_execute)
    return rt


def granted(ws: Path, *patterns: str, rules: RuleSet | None = None) -> ApprovalPolicy:
    events = [ApprovalDecided(seq=k, time=0, call_id=f"g{k}", name="bash", decision="allow", by="host:cli",
                              grant=Grant(tool="bash", pattern=p)) for k, p in enumerate(patterns)]
    return ApprovalPolicy(events, rules, callables=list, workspace=ws)


def allow_rule(pattern: str) -> RuleSet:
    return RuleSet([Rule(tool="bash", pattern=pattern, action="allow")], "rules.json")


@pytest.mark.parametrize("kind", NEUTRALISED)
async def test_an_allowed_git_command_runs_without_the_planted_program(
        repo: Path, session: Session, mode: str, kind: str) -> None:
    command, marker = plant(repo, kind)
    fires_in_plain_git(repo, command, marker)
    approver = FakeApprover()  # nothing may be asked: the rule allows it
    rt = runtime(repo, session, granted(repo, rules=allow_rule(" ".join(command.split()[:2]) + " *")), approver)
    out = await rt.run(call("bash", {"command": command}, "c1"))
    assert approver.requests == [] and out.code != "DENIED", out.text
    assert not marker.exists(), f"{kind}: the repository's program ran ({out.text})"


@pytest.mark.parametrize("kind", REFUSED)
async def test_a_repository_whose_config_runs_programs_is_not_covered(
        repo: Path, session: Session, mode: str, kind: str) -> None:
    command, marker = plant(repo, kind)
    fires_in_plain_git(repo, command, marker)
    sub = " ".join(command.split()[:2])
    for k, policy in enumerate([granted(repo, f"{sub} *"), granted(repo, rules=allow_rule(f"{sub} *"))]):
        approver = FakeApprover("deny")
        out = await runtime(repo, session, policy, approver).run(call("bash", {"command": command}, f"c{k}"))
        assert out.code == "DENIED" and len(approver.requests) == 1
        reason = approver.requests[0].reason or ""
        assert reason.startswith("not run unasked: the repository's git configuration sets "), reason
        assert not marker.exists()


ATTACKER_LINES = [
    "env -u GIT_CONFIG_COUNT git status", "git -c core.fsmonitor='touch {m}; false #' status",
    "GIT_CONFIG_COUNT=0 git status", "env GIT_CONFIG_COUNT=0 git status", "git --config-env=core.fsmonitor=X status",
    "cd . && git status", "git -C . status", "git --git-dir=.git status", "timeout 9 git status",
    "xargs git status < /dev/null", "bash -c 'env -u GIT_CONFIG_COUNT git status'",
]  # fmt: skip


@pytest.mark.parametrize("line", ATTACKER_LINES)
async def test_lines_that_shed_the_overrides_are_never_covered(repo: Path, session: Session, line: str) -> None:
    """Under a `git status` grant and a `git *` allow rule, every way of starting git without the
    overrides is asked (here: refused), and the planted fsmonitor never runs."""
    _, marker = plant(repo, "fsmonitor")
    command = line.format(m=marker)
    for k, policy in enumerate([granted(repo, "git status *"), granted(repo, rules=allow_rule("git *"))]):
        approver = FakeApprover("deny")
        out = await runtime(repo, session, policy, approver).run(call("bash", {"command": command}, f"c{k}"))
        assert out.code == "DENIED" and len(approver.requests) == 1, out.text
    assert not marker.exists()


async def test_a_plain_repository_keeps_its_grants(repo: Path, session: Session) -> None:
    git(repo, "remote", "add", "origin", "https://example.com/x.git")
    git(repo, "config", "branch.main.remote", "origin")
    git(repo, "config", "pull.rebase", "true")
    assert repository_refusal(repo) is None
    approver = FakeApprover()
    out = await runtime(repo, session, granted(repo, "git status *"), approver).run(
        call("bash", {"command": "git status --short"}, "c1"))
    assert approver.requests == [] and out.code != "DENIED" and "exit code: 0" in out.text


def test_git_config_keys_are_read_as_git_reads_them() -> None:
    assert config_keys('[core]\n\tbare = false\n[remote "origin"]\n\turl = x\n') == [
        "core.bare", "remote.origin.url"]
    assert config_keys("[core] fsmonitor = x\n") == ["core.fsmonitor"]  # a key on the header's line
    assert config_keys("[Filter.Evil]\nCLEAN=cat\n") == ["filter.evil.clean"]
    assert config_keys('[a]\nk = x\\\n[filter "y"]\n\tclean = z\n') == ["a.k", "a.clean"]  # continued value
    assert config_keys("[a]\nk = 1 ; note\n# [filter]\n\tflag\n") == ["a.k", "a.flag"]
    for bad in ('[a "unterminated]\n', "k = 1\n", "[a]\n= 1\n", '[a]\nk = "open\n', "[a]\n!k = 1\n",
                '[a]\nk = "x\\\n[filter \\"y\\"]\nclean = z"\n'):  # git: "bad config line" for each
        assert config_keys(bad) is None, bad


def test_every_git_the_tool_runs_gets_the_overrides() -> None:
    env = confine.allowed_env({"PATH": "/usr/bin"}, home="/tmp")
    assert env["GIT_CONFIG_COUNT"] == str(len(GIT_OVERRIDES))
    assert {env[f"GIT_CONFIG_KEY_{n}"]: env[f"GIT_CONFIG_VALUE_{n}"] for n in range(len(GIT_OVERRIDES))} == dict(GIT_OVERRIDES)
    theirs = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Me"}
    merged = git_config_env(theirs)  # passed through DSH_SANDBOX_ENV: kept, ours after (ours win)
    assert merged["GIT_CONFIG_COUNT"] == str(1 + len(GIT_OVERRIDES)) and merged["GIT_CONFIG_KEY_1"] == "core.fsmonitor"
    assert json.dumps(merged)  # plain strings


CONFIG_SAMPLES = [
    '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote "origin"]\n\turl = https://x/y.git\n',
    "[core] fsmonitor = x\n", "[Filter.Evil]\nCLEAN=cat\n", '[a]\nk = x\\\n[filter "y"]\n\tclean = z\n',
    "[a]\nk = 1 ; note\n# [filter]\n\tflag\n", '[a "Sub.Dot"]\n\tk = "q;#" # c\n', "\ufeff[a]\nk=v\n",
    '[a]\nk = "x\\\n[filter \\"y\\"]\nclean = z"\n', "[a]\n\tk = a\\tb\\\\\n\tl\n", "[a]k=1\n[b]m\n",
    '[include]\n\tpath = other.cfg\n[includeIf "gitdir:/x/"]\n\tpath = y\n', "[a]\n\tk = v\r\n\tl = w\r\n",
]  # fmt: skip


@pytest.mark.parametrize("text", CONFIG_SAMPLES)
def test_config_keys_agree_with_git_itself(text: str, tmp_path: Path) -> None:
    """git is the oracle: the keys it lists (includes not followed), or nothing where it refuses."""
    file = tmp_path / "config"
    file.write_text(text, encoding="utf-8")
    done = subprocess.run(["git", "config", "--file", str(file), "--no-includes", "--list", "--name-only"],
                          env=PLAIN_GIT, capture_output=True, text=True, check=False)
    ours = config_keys(text)
    if done.returncode != 0:
        assert ours is None, done.stderr
    else:
        assert ours == done.stdout.splitlines()
