"""Issue 35, finding 10 / design 1: outside the workspace every home is hidden but for an
allow-list (the interpreter, its packages, ``DSH_SANDBOX_READ``), not a list of known credential
files. A hostile command tries 34 credential-looking files — most on no list — by name, by
``find`` and by ``grep -r``, through the real ``bash`` tool as root and through bwrap started as
a normal user (``runuser``), with a real venv under the home that must keep working."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRegistry, ToolRuntime, builtin_tools, confine, seccomp
from dsh_notebook.tools.sandbox_allow import READ_VAR, allow_list
from dsh_notebook.tools.sandbox_mounts import mount_plan
from tests.hardening.conftest import give_to, needs_bwrap, normal_user
from tests.hardening.homes import (
    CREDENTIALS,
    PLAIN,
    PROBE_MODULE,
    leaked,
    make_venv,
    outside_tmp_home,
    plant,
    read_everything,
)
from tests.tools.helpers import Frames, call

pytestmark = needs_bwrap
CHECKS = "\n".join([
    "python3 -c 'import json, sys; print(\"venv-python\", sys.prefix)'",
    "PYTHONPATH={SITE} python3 -c 'import {MOD}; print(\"site-module\", {MOD}.ANSWER)'",
    "echo written > {OUT} && echo ws-writable",
    "cat {HOME}/.tools/bin/mytool 2>/dev/null",
])


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fake home with the credentials, an activated venv and a user site folder on sys.path."""
    with outside_tmp_home(monkeypatch) as fake_home:
        yield from _furnish(fake_home, monkeypatch)


def _furnish(fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    plant(fake_home)
    venv = make_venv(fake_home)
    (fake_home / ".tools" / "bin").mkdir(parents=True)
    (fake_home / ".tools" / "bin" / "mytool").write_text("echo TOOL-VISIBLE\n")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.syspath_prepend(str(fake_home / ".local" / "lib" / "dshprobe" / "site-packages"))
    monkeypatch.setenv("DSH_SANDBOX", "1")
    yield fake_home


def script(home: Path, ws: Path) -> str:
    checks = CHECKS.format(SITE=home / ".local" / "lib" / "dshprobe" / "site-packages", MOD=PROBE_MODULE,
                           OUT=home / "proj" / "out.txt", HOME=home)
    return read_everything(home) + "\n" + checks


async def bash(ws: Path, command: str) -> str:
    runtime = ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=Session("s_allow", cwd=str(ws)),
                          frames=Frames(), policy_mode="auto")
    out = await runtime.run(call("bash", {"command": command, "timeout_ms": 120_000}))
    assert out.code is None, out.text
    return out.text


def assert_works(out: str, home: Path) -> None:
    assert "end-of-reading" in out, out
    assert f"venv-python {home / '.venvs' / 'tool'}" in out, out  # the venv under $HOME still runs
    assert "site-module 42" in out, out  # a sys.path folder under $HOME is readable
    assert "ws-writable" in out, out


@pytest.mark.parametrize("kind", ["project", "home"])
async def test_no_credential_in_the_home_is_readable_and_the_venv_still_works(
        home: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    ws = home if kind == "home" else home / "proj"
    (home / ".rootlink").symlink_to("/")  # a dot entry leading to / must not hide the system
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "vimrc").write_text("set nu\n")
    (home / ".vimrc").symlink_to(home / "dotfiles" / "vimrc")  # a dotfile kept in a plain folder
    out = await bash(ws, script(home, ws) + f"\necho 'autocmd!' >> {home}/.vimrc || echo vimrc-unwritable")
    seen = PLAIN if kind == "home" else set()  # a home workspace: its plain files are the workspace
    assert leaked(out, seen) == [], out
    assert "SECRET-OTHERLOG" not in out  # $DSH_HOME
    assert_works(out, home)
    assert "TOOL-VISIBLE" not in out  # not on the allow-list
    assert (home / ".bashrc").read_text() == CREDENTIALS[".bashrc"] + "\n"
    assert (home / "dotfiles" / "vimrc").read_text() == "set nu\n"
    if kind == "home":
        assert "vimrc-unwritable" in out
        assert "SECRET-NOTES-34" in out  # the workspace's own files are the workspace
    assert (home / "proj" / "out.txt").read_text() == "written\n"


async def test_dsh_sandbox_read_adds_a_path_read_only(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(READ_VAR, f"~/.tools{os.pathsep}{home / '.kaggle'}{os.pathsep}~/.foo")
    ws = home / "proj"
    out = await bash(ws, script(home, ws) + f"\necho x > {home}/.tools/bin/mytool || echo read-only-tool")
    assert "TOOL-VISIBLE" in out and "read-only-tool" in out, out
    # a known credential store stays hidden even when listed; an unknown folder is the user's call
    assert leaked(out, {".foo/secret"}) == [], out
    assert "SECRET-FOO-04" in out
    assert (home / ".tools" / "bin" / "mytool").read_text() == "echo TOOL-VISIBLE\n"


async def test_other_users_homes_are_hidden(home: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a folder in /home needs root")
    other = Path("/home") / f"dsh-other-{secrets.token_hex(4)}"
    try:
        (other / ".ssh").mkdir(parents=True)
        (other / ".ssh" / "id_rsa").write_text("SECRET-OTHER-USER-KEY\n")
        (other / "thesis.tex").write_text("SECRET-OTHER-USER-WORK\n")
        ws = home / "proj"
        out = await bash(ws, f"cat {other}/.ssh/id_rsa {other}/thesis.tex; echo listed=$(ls -A /home | grep -c dsh-other); "
                             "grep -r SECRET-OTHER /home; echo done")
        assert "SECRET-OTHER-USER" not in out and "listed=0" in out and "done" in out, out
    finally:
        shutil.rmtree(other, ignore_errors=True)


@pytest.mark.parametrize("kind", ["project", "home"])
def test_a_normal_user_gets_the_same_allow_list(home: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    user = normal_user()
    if user is None:
        pytest.skip("not root and no user 'dshprobe' to run bwrap as")
    ws = home if kind == "home" else home / "proj"
    give_to(home, user)
    bw = confine.bubblewrap()
    assert bw is not None
    env = confine.allowed_env(home="/tmp")
    with seccomp.filter_fd() as fd:
        argv = confine.bwrap_argv(bw, ws, env, ["/bin/bash", "-c", script(home, ws)], network=False,
                                  seccomp_fd=fd, euid=user.pw_uid)
        done = subprocess.run(["runuser", "-u", user.pw_name, "--", *argv], capture_output=True, text=True,
                              env=env, timeout=120, check=False, pass_fds=() if fd is None else (fd,))
    out = done.stdout + done.stderr[-2000:]
    assert leaked(out, PLAIN if kind == "home" else set()) == [], out
    assert_works(out, home)
    assert (home / "proj" / "out.txt").stat().st_uid == user.pw_uid


def test_the_allow_list_never_takes_a_home_dsh_home_or_a_credential_store(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(home))  # a kernel started in ~ has ~ on sys.path
    monkeypatch.setenv(READ_VAR, f"{home / '.ssh'}{os.pathsep}{home / '.dsh'}{os.pathsep}{home / '.foo'}")
    (home / ".dsh").mkdir(exist_ok=True)
    never = [os.path.realpath(home / ".dsh")]
    allowed, refused = allow_list(never)
    shown = {a.path for a in allowed}
    assert str(home / ".foo") in shown  # asked for, and no known store
    assert str(home) not in shown and str(home / ".ssh") not in shown and str(home / ".dsh") not in shown
    assert {str(home), str(home / ".ssh"), str(home / ".dsh")} <= {r.path for r in refused}
    plan = mount_plan(home / "proj")
    assert plan.state(str(home / ".ssh" / "id_ed25519")) == "hide"
    assert plan.state(str(home / ".foo" / "secret")) == "ro"
    assert plan.state(str(home / "proj")) == "rw"
