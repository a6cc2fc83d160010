"""Model ids with a colon under ``--base-url`` (issue 13 item 5), and session grants surviving a
resume — through the CLI subprocess and the in-process client, against the loopback server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import normalize_model_id, settings_from_env
from dsh_notebook.launcher import new_host
from dsh_notebook.wire.events import ApprovalDecided
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply


@pytest.mark.parametrize(("model", "base_url", "expected"), [
    ("qwen2.5:7b", "http://localhost:11434/v1", "openai:qwen2.5:7b"),
    ("llama3.1:8b-instruct-q4_K_M", "http://x/v1", "openai:llama3.1:8b-instruct-q4_K_M"),
    ("deepseek:deepseek-chat", "http://x/v1", "deepseek:deepseek-chat"),
    ("openai:qwen2.5:7b", "http://x/v1", "openai:qwen2.5:7b"),
    ("script:auto", "http://x/v1", "script:auto"),
    ("qwen2.5:7b", None, "qwen2.5:7b"),  # without a base URL: provider:model as before
])
def test_normalize_model_id(model: str, base_url: str | None, expected: str) -> None:
    assert normalize_model_id(model, base_url) == expected


def test_the_cli_sends_a_model_name_with_a_colon_intact_and_resume_keeps_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeOpenAIServer(models=("qwen2.5:7b",)) as server:
        server.enqueue(text_reply("hi"), text_reply("again"))
        first = run_cli("run", "--model", "qwen2.5:7b", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "hello", home=home)
        assert first.returncode == 0, first.stderr
        sid, _ = session_of(first.stdout)
        again = run_cli("run", "--session", sid, "hello again", home=home)
        models = [r.body["model"] for r in server.requests]
    assert again.returncode == 0, again.stderr
    assert models == ["qwen2.5:7b", "qwen2.5:7b"]
    env = run_cli("run", "--cwd", str(tmp_path), "x", home=home,
                  extra_env={"DSH_MODEL": "qwen2.5:7b", "DSH_BASE_URL": "http://127.0.0.1:9/v1", "DSH_TIMEOUT": "0.2"})
    assert "UNKNOWN_PROVIDER" not in env.stderr and "BAD_MODEL" not in env.stderr


def _wait(predicate: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.mark.integration
def test_an_allow_for_the_session_is_logged_and_restored_on_resume(tmp_path: Path, isolated_dsh_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer() as server:
        assert server.api_key is not None
        monkeypatch.setenv("DSH_API_KEY", server.api_key)
        server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": "echo granted"}))]), text_reply("ok"))
        host = new_host(settings_from_env(), name="dsh-test-host")
        client = DshClient(host)
        try:
            sid = client.create_session(cwd=str(tmp_path), model="fake-model", approve="ask",
                                        base_url=server.base_url).session_id
            handle = client.follow(sid)
            handle.wait_snapshot()
            receipt = client.prompt("echo", sid)
            _wait(lambda: client.info(sid).pending_approvals, "the approval")
            client.approve(sid, "c1", "allow", scope="session")
            handle.wait_turn_end(receipt.request_id, timeout=60)
            handle.close()
        finally:
            client.close()
            host.shutdown()
        log = isolated_dsh_home / "sessions" / f"{sid}.jsonl"
        decided = [json.loads(line) for line in log.read_text().splitlines() if '"approval/decided"' in line]
        assert decided == [{**decided[0], "grant": {"tool": "bash", "pattern": "echo *"}}]
        assert ApprovalDecided.model_validate(decided[0]).rule == 'session bash "echo *"'
        host = new_host(settings_from_env(), name="dsh-test-host-2")
        client = DshClient(host)
        try:
            client.resume(sid)
            grants = client.info(sid).grants
        finally:
            client.close()
            host.shutdown()
    assert [(g.tool, g.pattern) for g in grants] == [("bash", "echo *")]
