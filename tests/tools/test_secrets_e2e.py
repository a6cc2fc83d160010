"""Issue 16, "keys leak to bash, the log and the model": a loopback OpenAI-compatible server
scripts a bash call that dumps every environment it can see; no secret of the host's
environment may appear in the bash output, the session log, stdout/stderr, or any request the
server received. Run with the bubblewrap sandbox and without it (redaction alone must hold)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_notebook.tools.confine import bubblewrap
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

REPO = Path(__file__).resolve().parents[2]
SECRETS = {
    "OPENAI_API_KEY": "sk-openai-leak-0123456789abcdef",
    "DEEPSEEK_API_KEY": "sk-deepseek-leak-0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "GITHUB_TOKEN": "ghp_leakleakleakleakleakleak0123456789",
    "MY_PASS": "correct-horse-battery",
    "ANTHROPIC_AUTH": "anthropic-auth-value-42",
    "DATABASE_URL": "postgres://app:db-pa55word-xyz@db.internal:5432/app",
}
VALUES = [v for k, v in SECRETS.items() if k != "DATABASE_URL"] + ["db-pa55word-xyz"]
DUMP = "tr '\\0' '\\n' < /proc/$PPID/environ; env; cat /proc/*/environ | tr '\\0' '\\n'; echo DUMPED"


def _modes() -> list[object]:
    sandbox = pytest.param("bwrap", marks=pytest.mark.skipif(bubblewrap() is None, reason="no usable bwrap"))
    return [sandbox, "fallback"]


@pytest.mark.parametrize("mode", _modes())
def test_no_secret_reaches_bash_output_log_or_requests(tmp_path: Path, mode: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        key = server.api_key or ""
        server.enqueue(
            tool_call_reply([("call_1", "bash", json.dumps({"command": DUMP}))], text="Looking."),
            text_reply(f"Done. By the way {SECRETS['GITHUB_TOKEN']} and {key}."),  # the model echoes secrets
        )
        env = {**os.environ, **SECRETS, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": key,
               "DSH_SANDBOX": "1" if mode == "bwrap" else "0"}
        done = dsh("run", "--approve", "auto", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(ws), "dump the environment", env=env, timeout=120)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    logs = list((home / "sessions").glob("*.jsonl"))
    assert len(logs) == 1
    log_text = logs[0].read_text()
    result = [json.loads(line) for line in log_text.splitlines() if '"tool/result"' in line]
    assert result and "DUMPED" in json.dumps(result)  # the command really ran and printed
    assert "PATH=" in json.dumps(result)
    bodies = [json.dumps(r.body) for r in requests]
    assert len(bodies) == 2 and "DUMPED" in bodies[1]  # its output was sent to the model
    for value in [*VALUES, key]:
        assert value not in log_text, f"{value} committed to the log"
        assert value not in done.stdout + done.stderr, f"{value} printed"
        for body in bodies:
            assert value not in body, f"{value} sent to the model"
    assert "***" in log_text  # the secrets the host process has were masked, not merely absent
    if mode == "fallback":
        assert "no sandbox" in done.stderr  # said once, clearly
        assert done.stderr.count("no sandbox") == 1
