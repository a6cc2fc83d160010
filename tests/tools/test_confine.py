"""The bash sandbox (bubblewrap) and process cleanup, with real subprocesses.

Issue 16: keys readable through ``/proc/$PPID/environ``; children outliving the call
(``&``, ``nohup``, ``setsid``, double fork); the network on/off setting; the workspace the only
writable place. Each process test runs sandboxed and unconfined (``DSH_SANDBOX=0``)."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.tools import ToolRuntime, confine
from tests.tools.helpers import call, none_left, procs_with

MakeRuntime = Callable[..., ToolRuntime]
needs_bwrap = pytest.mark.skipif(confine.bubblewrap() is None, reason="no usable bubblewrap here")


@pytest.fixture(params=[pytest.param("bwrap", marks=needs_bwrap), "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("DSH_SANDBOX", "1" if request.param == "bwrap" else "0")
    return str(request.param)


async def bash(runtime: ToolRuntime, command: str, **kw: object) -> str:
    out = await runtime.run(call("bash", {"command": command, **kw}))
    return out.text


DETACHED = {
    "background": "sleep 310.{n} >/dev/null 2>&1 &",
    "nohup": "nohup sleep 310.{n} >/dev/null 2>&1 &",
    "setsid": "setsid sleep 310.{n} >/dev/null 2>&1 < /dev/null &",
    "double-fork": "( ( sleep 310.{n} >/dev/null 2>&1 & ) & ) ; sleep 0.05",
    "setsid-double-fork": "setsid bash -c '( sleep 310.{n} >/dev/null 2>&1 & )' </dev/null >/dev/null 2>&1",
}


@pytest.mark.integration
@pytest.mark.parametrize("kind", sorted(DETACHED))
async def test_no_process_outlives_a_finished_call(make_runtime: MakeRuntime, mode: str, kind: str) -> None:
    n = f"{sorted(DETACHED).index(kind)}{len(mode)}"
    text = await bash(make_runtime(), DETACHED[kind].format(n=n) + f"\nsleep 0.1; pgrep -f 'sleep 310.{n}' >/dev/null && echo launched")
    assert "launched" in text and "[exit code: 0]" in text
    assert await none_left(f"310.{n}"), f"{kind} child survived the call ({mode})"


@pytest.mark.integration
async def test_no_process_outlives_a_timed_out_call(make_runtime: MakeRuntime, mode: str) -> None:
    n = len(mode)
    out = await make_runtime().run(call("bash", {"command": f"setsid sleep 311.{n} & sleep 300.9{n}", "timeout_ms": 400}))
    assert out.code == "TIMED_OUT"
    assert await none_left(f"311.{n}") and await none_left(f"300.9{n}")


@pytest.mark.integration
async def test_no_process_outlives_a_cancelled_call(make_runtime: MakeRuntime, mode: str, ws: Path) -> None:
    n = len(mode)
    task = asyncio.ensure_future(make_runtime().run(call("bash", {"command": f"setsid sleep 312.{n} & touch up; wait"})))
    while not (ws / "up").exists() or not procs_with(f"312.{n}"):  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await none_left(f"312.{n}")


@pytest.mark.integration
@needs_bwrap
async def test_sandbox_sees_only_its_own_processes_and_no_host_environment(
    make_runtime: MakeRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_SANDBOX", "1")
    monkeypatch.setenv("SANDBOX_PROBE_SECRET_TOKEN", "probe-secret-value-123")
    monkeypatch.setenv("SANDBOX_PROBE_PLAIN", "probe-plain-value")
    text = await bash(make_runtime(), "ls /proc | grep -c '^[0-9]'; cat /proc/*/environ | tr '\\0' '\\n' | grep PROBE; "
                                      "tr '\\0' '\\n' < /proc/1/environ; echo end")
    count = int(text.split("\n", 1)[0])
    assert count <= 6  # bwrap's init, bash and the pipeline: not the host's processes
    assert "probe-secret-value" not in text and "probe-plain-value" not in text and "PROBE" not in text.split("end")[0][3:]
    assert "PATH=" in text  # PID 1's environment is the minimal one bwrap itself was given


@pytest.mark.integration
@needs_bwrap
async def test_sandbox_file_system_is_read_only_but_for_the_workspace(
    make_runtime: MakeRuntime, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_SANDBOX", "1")
    outside = tmp_path / "outside.txt"
    outside.write_text("host file")
    dsh_home = Path(os.environ["DSH_HOME"])
    (dsh_home / "sessions").mkdir(parents=True, exist_ok=True)
    (dsh_home / "sessions" / "s_x.jsonl").write_text("log line")
    text = await bash(make_runtime(), f"echo hi > inside.txt && echo ok-inside; echo x > {outside} || echo ro-outside; "
                                      f"touch /usr/dsh-probe || echo ro-usr; cat {dsh_home}/sessions/s_x.jsonl || echo hidden-home")
    assert "ok-inside" in text and (ws / "inside.txt").read_text() == "hi\n"
    assert "ro-usr" in text and "dsh-probe" not in os.listdir("/usr")
    assert outside.read_text() == "host file"  # /tmp of the host is not the sandbox's /tmp
    assert "hidden-home" in text and "log line" not in text


@pytest.mark.integration
@needs_bwrap
@pytest.mark.parametrize("network", [True, False])
async def test_network_is_on_by_default_and_off_by_config(
    make_runtime: MakeRuntime, monkeypatch: pytest.MonkeyPatch, network: bool
) -> None:
    monkeypatch.setenv("DSH_SANDBOX", "1")
    if not network:
        monkeypatch.setenv("DSH_SANDBOX_NETWORK", "0")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        text = await bash(make_runtime(), f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo CONNECTED || echo REFUSED")
    assert ("CONNECTED" in text) is network and ("REFUSED" in text) is not network


def test_configure_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_SANDBOX_NETWORK", "1")
    try:
        confine.configure(network=False)
        assert confine.network_enabled() is False
    finally:
        confine.configure(network=None)
    monkeypatch.setenv("DSH_SANDBOX_NETWORK", "off")
    assert confine.network_enabled() is False


def test_allowed_env_is_an_allow_list() -> None:
    base = {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm",
            "OPENAI_API_KEY": "sk-x", "DATABASE_URL": "postgres://u:pw@h/db", "RANDOM_VAR": "x",
            "DSH_SANDBOX_ENV": "RANDOM_VAR,MY_TOKEN", "MY_TOKEN": "t"}
    env = confine.allowed_env(base, home="/tmp")
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/tmp" and env["LC_ALL"] == "C"
    assert env["RANDOM_VAR"] == "x"  # named in DSH_SANDBOX_ENV
    assert "OPENAI_API_KEY" not in env and "MY_TOKEN" not in env and "DATABASE_URL" not in env


def test_no_sandbox_is_said_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "_warned", confine.threading.Event())
    assert confine.warn_once("test reason") is True
    assert confine.warn_once("test reason") is False
    err = capsys.readouterr().err
    assert err.count("no sandbox") == 1 and "test reason" in err and "doctor" in err


@pytest.mark.integration
@pytest.mark.parametrize("timeout", [None, 400])
async def test_a_child_that_clears_its_environment_is_still_ended(make_runtime: MakeRuntime, mode: str, timeout: int | None) -> None:
    """No marker to find it by: the PID namespace (bwrap) or the subreaper (fallback) ends it."""
    n = f"{len(mode)}{timeout or 0}"
    command = f"( env -i setsid sleep 314.{n} >/dev/null 2>&1 < /dev/null & ) ; sleep 0.1; pgrep -f 'sleep 314.{n}' >/dev/null && echo launched"
    if timeout:
        command += "; sleep 30"
    out = await make_runtime().run(call("bash", {"command": command, **({"timeout_ms": timeout} if timeout else {})}))
    assert "launched" in out.text and (out.code == "TIMED_OUT") is bool(timeout)
    assert await none_left(f"314.{n}")
