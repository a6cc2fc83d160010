"""One writer per session (issue 16, item 3): two real ``run --session ID`` processes at once.

The first run holds the session while the loopback model server stalls its answer; the second
is refused with ``SESSION_BUSY`` and writes nothing; ``show`` and ``sessions`` still read the log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dsh_notebook.errors import SessionError
from dsh_notebook.session import SessionStore, load_log
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply

REPO = Path(__file__).resolve().parents[2]


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": FakeOpenAIServer.api_key or ""}


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dsh(*args, env=_env(home), timeout=120)


def test_a_second_run_on_a_busy_session_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _cli("run", "--model", "script:auto", "--cwd", str(tmp_path), "hi", home=home)
    assert first.returncode == 0, first.stderr
    sid = first.stdout.strip().splitlines()[-1].split()[1]
    log_path = home / "sessions" / f"{sid}.jsonl"
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("slow answer", stall_after=1, stall_seconds=60))
        holder = subprocess.Popen(
            [sys.executable, "-m", "dsh_notebook", "run", "--session", sid, "--model", "fake-model",
             "--base-url", server.base_url, "--approve", "deny", "hold it"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(home),
        )
        try:
            deadline = time.monotonic() + 60
            while not server.requests:  # the request is sent after the resume flushed: it holds the lock
                assert holder.poll() is None, holder.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.05)
            before = log_path.read_bytes()
            second = _cli("run", "--session", sid, "--model", "script:auto", "me too", home=home)
            assert second.returncode != 0
            assert "SESSION_BUSY" in second.stderr and f"process {holder.pid}" in second.stderr
            assert "Traceback" not in second.stderr
            assert log_path.read_bytes() == before  # the refused writer wrote nothing
            shown = _cli("show", sid, home=home)  # reading still works while it is locked
            assert shown.returncode == 0, shown.stderr
            assert "hold it" in shown.stdout
            listed = _cli("sessions", home=home)
            assert listed.returncode == 0 and sid in listed.stdout
            row = next(line for line in listed.stdout.splitlines() if line.startswith(sid))
            assert " busy " in row  # it says who holds it, and the probe took no lock
        finally:
            holder.send_signal(signal.SIGINT)
            out, err = holder.communicate(timeout=60)
    assert holder.returncode == 130, err
    loaded = load_log(log_path)  # one writer at a time: dense seqs, nothing torn
    assert [e.seq for e in loaded.events] == list(range(len(loaded.events))) and not loaded.warnings
    again = _cli("run", "--session", sid, "--model", "script:auto", "now me", home=home)
    assert again.returncode == 0, again.stderr  # the lock went with the first process


def test_two_stores_in_one_process_cannot_both_write_one_session(tmp_path: Path) -> None:
    one = SessionStore(tmp_path)
    s = one.create("/ws")
    with pytest.raises(SessionError) as err:
        SessionStore(tmp_path).resume(s.id)
    assert err.value.code == "SESSION_BUSY" and "this process" in err.value.message
    one.close(s.id)
    resumed = SessionStore(tmp_path).resume(s.id)
    assert resumed.id == s.id


def test_a_second_host_on_the_same_home_gets_session_busy_on_the_wire(tmp_path: Path) -> None:
    from tests.host.support import RawConn, make_host

    first, second = make_host(tmp_path / "home"), make_host(tmp_path / "home")
    try:
        sid = RawConn(first).call("session/create", {"model": "script:auto"})["result"]["value"]["sessionId"]
        log_path = tmp_path / "home" / "sessions" / f"{sid}.jsonl"
        before = log_path.read_bytes()
        conn = RawConn(second)
        reply = conn.call("session/resume", {"sessionId": sid})
        assert reply["result"]["ok"] is False and reply["result"]["error"]["code"] == "SESSION_BUSY"
        prompt = {"request": {"sessionId": sid, "requestId": "q", "mode": "queue", "content": "hi"}}
        reply = conn.call("session/prompt", prompt, rpc_id="p")
        assert reply["result"]["error"]["code"] == "SESSION_BUSY"
        assert log_path.read_bytes() == before
        listed = conn.call("session/list", {}, rpc_id="l")  # reading still works
        assert sid in json.dumps(listed["result"]["value"])
    finally:
        second.shutdown()
        first.shutdown()
