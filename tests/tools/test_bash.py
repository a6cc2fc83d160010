"""The bash tool with real subprocesses: exit codes, output caps, env scrubbing, group kills."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from dsh_notebook.tools import ToolRuntime
from dsh_notebook.tools.builtin import bash as bash_mod
from tests.tools.helpers import call, none_left, procs_with

MakeRuntime = Callable[..., ToolRuntime]


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (PID 1 here may not reap orphans)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def gone(pid: int) -> bool:
    for _ in range(500):  # the kill is synchronous; this only lets the kernel finish the exit
        if not alive(pid):
            return True
        await asyncio.sleep(0.01)
    return False


@pytest.mark.integration
async def test_runs_in_workspace_and_reports_exit_code(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "hello.txt").write_text("hi from the workspace\n")
    runtime = make_runtime()
    out = await runtime.run(call("bash", {"command": "pwd; cat hello.txt; echo err >&2; exit 3"}))
    assert not out.is_error  # the tool ran; the command's verdict is the exit code
    assert str(runtime.workspace.root) in out.text
    assert "hi from the workspace" in out.text and "err" in out.text
    assert out.text.endswith("[exit code: 3]")
    assert out.meta == {"exitCode": 3, "bytes": out.meta["bytes"]} if out.meta else False


@pytest.mark.integration
async def test_no_output_is_said(make_runtime: MakeRuntime) -> None:
    out = await make_runtime().run(call("bash", {"command": "true"}))
    assert out.text == "(no output)\n[exit code: 0]"


@pytest.mark.integration
async def test_env_has_no_api_keys(make_runtime: MakeRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak-123456")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-nor-this-one-123456")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret_value")
    monkeypatch.setenv("DSH_TEST_VISIBLE", "plain-value")
    monkeypatch.setenv("DSH_TEST_UNLISTED", "not-passed")
    monkeypatch.setenv("DSH_SANDBOX_ENV", "DSH_TEST_VISIBLE,GITHUB_TOKEN")  # a secret name never passes
    out = await make_runtime().run(call("bash", {"command": "env"}))
    assert "OPENAI_API_KEY" not in out.text and "sk-should-not-leak" not in out.text
    assert "DEEPSEEK_API_KEY" not in out.text and "GITHUB_TOKEN" not in out.text
    assert "DSH_TEST_VISIBLE=plain-value" in out.text  # listed in DSH_SANDBOX_ENV
    assert "DSH_TEST_UNLISTED" not in out.text  # an allow-list, not a deny-list
    assert "PATH=" in out.text and "HOME=" in out.text


@pytest.mark.integration
async def test_output_cap_keeps_head_and_tail(
    make_runtime: MakeRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_mod, "OUTPUT_HEAD", 2000)
    monkeypatch.setattr(bash_mod, "OUTPUT_TAIL", 2000)
    cmd = "echo FIRST-LINE; for i in $(seq 1 20000); do echo filler-$i; done; echo LAST-LINE"
    out = await make_runtime().run(call("bash", {"command": cmd}))
    assert out.text.startswith("FIRST-LINE")
    assert "LAST-LINE\n[exit code: 0]" in out.text
    assert "bytes elided from the middle" in out.text
    assert "filler-10000\n" not in out.text
    assert len(out.text) < 5000


@pytest.mark.integration
async def test_timeout_kills_the_whole_process_group(make_runtime: MakeRuntime, ws: Path) -> None:
    cmd = "sleep 300.101 & echo started; wait"
    out = await make_runtime().run(call("bash", {"command": cmd, "timeout_ms": 500}))
    assert out.is_error and out.code == "TIMED_OUT"
    assert out.text.startswith("Error: command timed out after 500 ms")
    assert "started" in out.text  # output produced before the timeout is kept
    assert await none_left("300.101")


@pytest.mark.integration
async def test_cancel_kills_the_process_group(make_runtime: MakeRuntime, ws: Path) -> None:
    runtime = make_runtime()
    cmd = "sleep 300.102 & echo x > started; wait"
    task = asyncio.ensure_future(runtime.run(call("bash", {"command": cmd})))
    while not (ws / "started").exists() or not procs_with("300.102"):  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await none_left("300.102")


@pytest.mark.integration
async def test_background_child_holding_the_pipe_does_not_hang(
    make_runtime: MakeRuntime, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bash_mod, "EOF_GRACE_S", 0.2)
    monkeypatch.setenv("DSH_SANDBOX", "0")  # unconfined: the shell exits, its child holds the pipe
    out = await make_runtime().run(call("bash", {"command": "sleep 300.103 & echo main done"}))
    assert out.text.startswith("main done\n") and "[exit code: 0]" in out.text  # the call did not wait 300 s
    assert await none_left("300.103")


async def test_timeout_argument_is_validated(make_runtime: MakeRuntime) -> None:
    out = await make_runtime().run(call("bash", {"command": "true", "timeout_ms": 0}))
    assert out.code == "INVALID_ARGS" and "timeout_ms" in out.text
