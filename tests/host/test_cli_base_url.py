"""``python -m dsh_notebook run --base-url`` in a real subprocess against the loopback
OpenAI-compatible server: the real ``openai`` SDK, real HTTP/SSE, a real ``read`` tool."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

from dsh_notebook.demo import copy_demo_workspace
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

REPO = Path(__file__).resolve().parents[2]


def _run_cli(*args: str, home: Path, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": FakeOpenAIServer.api_key or "",
           **(extra_env or {})}
    return dsh("run", *args, env=env, timeout=120)


def test_run_against_a_base_url_completes_a_tool_turn(tmp_path: Path) -> None:
    workspace = copy_demo_workspace(tmp_path / "ws")
    readme_head = (workspace / "README.md").read_text().splitlines()[0]
    with FakeOpenAIServer() as server:
        server.enqueue(
            tool_call_reply([("call_1", "read", json.dumps({"file_path": "README.md"}))], text="Reading it."),
            text_reply("The README describes a tiny TypeScript project."),
        )
        done = _run_cli("--model", "fake-model", "--base-url", server.base_url, "--cwd", str(workspace),
                        "read README.md and summarise", home=tmp_path / "home")
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == "The README describes a tiny TypeScript project."
    assert lines[-1].startswith("session: s_") and " log: " in lines[-1]
    assert [r.status for r in requests] == [200, 200]  # both requests passed the strict validation
    second = requests[1].messages
    assert [m["role"] for m in second[-2:]] == ["assistant", "tool"]
    assert second[-2]["tool_calls"][0]["id"] == "call_1" and second[-1]["tool_call_id"] == "call_1"
    assert readme_head in second[-1]["content"]  # the real file content reached the model
    assert FakeOpenAIServer.api_key not in done.stdout + done.stderr


def test_run_reports_a_coded_error_and_exits_non_zero_when_the_server_refuses(tmp_path: Path) -> None:
    with FakeOpenAIServer(api_key="sk-the-right-key-0123456789") as server:
        done = _run_cli("--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "hello", home=tmp_path / "home")
    assert done.returncode != 0
    assert "AUTH" in done.stderr and "sk-the-right-key" not in done.stderr + done.stdout


def test_run_against_a_server_that_never_answers_ends_with_a_coded_timeout(tmp_path: Path) -> None:
    """A server that accepts and never answers: each attempt times out (DSH_TIMEOUT), the turn
    ends with a coded error, no traceback, no key; the session then takes another prompt."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        home = tmp_path / "home"
        done = _run_cli("--model", "fake-model", "--base-url", f"http://127.0.0.1:{port}/v1", "--cwd",
                        str(tmp_path), "hello", home=home, extra_env={"DSH_TIMEOUT": "0.2"})
    assert done.returncode == 1, done.stderr
    assert "error [MODEL_TIMEOUT]" in done.stderr and "sent nothing for 0.2 s (first-byte timeout" in done.stderr
    assert "Traceback" not in done.stderr
    assert (FakeOpenAIServer.api_key or "") not in done.stdout + done.stderr
    session_id = done.stdout.strip().splitlines()[-1].split()[1]
    again = _run_cli("--session", session_id, "--model", "script:auto", "hi", home=home)
    assert again.returncode == 0, again.stderr
    assert f"session: {session_id} " in again.stdout


def test_a_resumed_session_keeps_talking_to_its_endpoint(tmp_path: Path) -> None:
    """`run --session ID` without --base-url in a new process: the log's request/header names the
    endpoint, so the conversation (and a key) never goes to the provider's public host instead."""
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("first answer"), text_reply("second answer"))
        first = _run_cli("--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                         "hello", home=home)
        assert first.returncode == 0, first.stderr
        session_id = first.stdout.strip().splitlines()[-1].split()[1]
        again = _run_cli("--session", session_id, "hello again", home=home)
        requests = list(server.requests)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("second answer")
    assert len(requests) == 2  # both turns went to the loopback endpoint
    texts = [(m["role"], m["content"]) for m in requests[1].messages]
    assert ("assistant", "first answer") in texts and ("user", "hello again") in texts
    log = (home / "sessions" / f"{session_id}.jsonl").read_text().splitlines()
    headers = [json.loads(line) for line in log if '"request/header"' in line]
    assert [h["reason"] for h in headers] == ["initial", "resume"]
    assert {h["endpoint"] for h in headers} == {server.base_url}
