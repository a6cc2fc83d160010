"""The tests' CLI runner (``tests/support/cli.py``): a run forked from the warm interpreter is a real
process of ``python -m dsh_notebook`` — the same output, exit status, stdin and files as a cold
start — and a timeout leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.support.cli import _Zygote, cli_env, dsh


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> object:
    def run(*argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
        monkeypatch.setenv("DSH_TEST_COLD", "1")
        try:
            return dsh(*argv, **kw)  # type: ignore[arg-type]
        finally:
            monkeypatch.delenv("DSH_TEST_COLD")

    return run


def test_a_warm_run_answers_as_a_cold_start_does(cold: object, tmp_path: Path) -> None:
    assert _Zygote.get() is not None  # Linux: the warm path is the one under test
    env = cli_env(DSH_HOME=str(tmp_path / "home"))
    for argv in (("run", "--bogus"), ("show", str(tmp_path / "missing")), ("schema",), ("sessions",)):
        warm, again = dsh(*argv, env=env), cold(*argv, env=env)  # type: ignore[operator]
        assert (warm.returncode, warm.stdout, warm.stderr) == (again.returncode, again.stdout, again.stderr), argv


def test_a_warm_run_is_its_own_process_in_its_own_directory_and_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = dsh("run", "read README.md and summarise", env=cli_env(DSH_HOME=str(home)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sid, _, log = done.stdout.strip().splitlines()[-1].removeprefix("session: ").partition(" log: ")
    assert Path(log) == home / "sessions" / f"{sid}.jsonl" and Path(log).exists()  # DSH_HOME of this run only
    zygote = _Zygote.get()
    assert zygote is not None and not psutil.Process(zygote.proc.pid).children()  # ended, and waited for


def test_stdin_reaches_the_process_and_its_end_is_seen(tmp_path: Path) -> None:
    lines = ['{"type": "nonsense"}', "not json"]
    done = dsh("serve", "--stdio", input="\n".join(lines) + "\n", env=cli_env(DSH_HOME=str(tmp_path)), timeout=60)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and len(replies) == 2 and all(
        r["result"]["error"]["code"] == "BAD_ENVELOPE" for r in replies), done


def test_a_timeout_kills_the_process_and_says_what_it_wrote(tmp_path: Path) -> None:
    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    env = cli_env(DSH_HOME=str(tmp_path), DSH_TIMEOUT="600", DSH_API_KEY="k")
    try:
        with pytest.raises(subprocess.TimeoutExpired) as expired:
            dsh("run", "--model", "m", "--base-url", url, "--cwd", str(tmp_path), "hi", env=env, timeout=3)
    finally:
        silent.close()
    assert isinstance(expired.value.stderr, str)
    zygote = _Zygote.get()
    assert zygote is not None and not psutil.Process(zygote.proc.pid).children()
    assert os.environ.get("DSH_TEST_COLD") != "1"


def test_a_long_argv_arrives_whole(cold: object, tmp_path: Path) -> None:
    """A request longer than one socket read (a prompt of 6,000 words, as the real-model tests send)."""
    env = cli_env(DSH_HOME=str(tmp_path))
    long = "--" + "x" * 100_000  # a cold start takes at most 128 KiB an argument
    warm, again = dsh("run", long, env=env), cold("run", long, env=env)  # type: ignore[operator]
    assert warm.returncode == 2 and long in warm.stderr
    assert (warm.returncode, warm.stdout, warm.stderr) == (again.returncode, again.stdout, again.stderr)


def test_a_warm_interpreter_that_died_is_replaced_and_the_run_still_happens(tmp_path: Path) -> None:
    first = _Zygote.get()
    assert first is not None
    os.kill(first.proc.pid, signal.SIGKILL)  # dead, not reaped: its socket is there, nobody listens
    process = psutil.Process(first.proc.pid)
    while process.status() != psutil.STATUS_ZOMBIE:
        time.sleep(0.01)
    done = dsh("sessions", env=cli_env(DSH_HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    second = _Zygote.get()
    assert second is not None and second is not first and second.proc.poll() is None
