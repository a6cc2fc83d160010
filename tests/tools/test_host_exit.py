"""Issue 16: "SIGTERM to `run` leaves its bash child running". A real `python -m dsh_notebook
run` subprocess, a loopback OpenAI-compatible server scripting a bash call that starts a
detached child; the CLI is stopped by SIGTERM or SIGINT mid-call: afterwards no process the
call started is left, sandboxed or not."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dsh_notebook.tools.confine import bubblewrap
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.tools.helpers import procs_with

REPO = Path(__file__).resolve().parents[2]


def _wait(cond: object, limit: int = 3000) -> bool:
    for _ in range(limit):
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=pytest.mark.skipif(bubblewrap() is None, reason="no bwrap")),
                                  "fallback"])
def test_stopping_run_mid_call_leaves_no_process(tmp_path: Path, mode: str, sig: signal.Signals) -> None:
    token = f"320.{int(sig)}{len(mode)}"
    command = f"setsid sleep {token} >/dev/null 2>&1 < /dev/null & nohup sleep {token}1 >/dev/null 2>&1 & sleep {token}2"
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("call_1", "bash", json.dumps({"command": command}))]), text_reply("done"))
        env = {**os.environ, "DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
               "DSH_API_KEY": server.api_key or "", "DSH_SANDBOX": "1" if mode == "bwrap" else "0"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_notebook", "run", "--approve", "auto", "--model", "fake-model",
             "--base-url", server.base_url, "--cwd", str(tmp_path), "start things"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        try:
            assert _wait(lambda: len(procs_with(token)) >= 3), "the command never started its children"
            proc.send_signal(sig)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert _wait(lambda: not procs_with(token), 500), f"left behind after {sig.name} ({mode}): {procs_with(token)}"


@pytest.mark.integration
@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=pytest.mark.skipif(bubblewrap() is None, reason="no bwrap")),
                                  "fallback"])
def test_eof_on_serve_stdio_mid_call_leaves_no_process(tmp_path: Path, mode: str) -> None:
    from dsh_notebook.client.dsh_client import DshClient
    from dsh_notebook.client.transport import StdioTransport

    token = f"321.{len(mode)}"
    # at EOF the host lets running turns end (their frames are still written), then exits
    command = f"setsid sleep {token} >/dev/null 2>&1 < /dev/null & sleep 1.{len(mode)}"
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("call_1", "bash", json.dumps({"command": command}))]), text_reply("done"))
        transport = StdioTransport(env={"DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
                                        "DSH_API_KEY": server.api_key or "", "DSH_SANDBOX": "1" if mode == "bwrap" else "0"})
        client = DshClient(transport=transport)
        try:
            sid = client.create_session(model="fake-model", base_url=server.base_url, cwd=str(tmp_path), approve="auto").session_id
            client.prompt("start things", sid)
            assert _wait(lambda: len(procs_with(token)) >= 1), "the command never started its child"
        finally:
            code = transport.close(timeout=60)  # EOF on the server's stdin: the host shuts down
    assert code == 0
    assert _wait(lambda: not procs_with(token), 500), f"left behind after EOF ({mode}): {procs_with(token)}"
