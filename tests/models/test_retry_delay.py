"""``DSH_RETRY_DELAY``: the seconds before a failed model request's first retry (doubled at each
further attempt) reach the Agent of every session a host starts — the product owns this clock,
so a user (or a test) that wants no wait sets it, and nothing waits the default 0.5 + 1 + 2 s.
Real Host, real ``openai`` SDK over HTTP to the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import DEFAULT_RETRY_DELAY_S, settings_from_env
from dsh_notebook.errors import UserError
from dsh_notebook.launcher import new_host
from tests.support.fake_openai import FakeOpenAIServer, error_reply, text_reply


def test_the_delay_is_read_from_the_environment_and_bad_values_are_coded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_RETRY_DELAY", raising=False)
    assert settings_from_env().retry_delay == DEFAULT_RETRY_DELAY_S == 0.5
    for raw, value in (("0", 0.0), ("0.05", 0.05), (" 2 ", 2.0), ("", 0.5), ("30", 30.0)):
        monkeypatch.setenv("DSH_RETRY_DELAY", raw)
        assert settings_from_env().retry_delay == value
    for bad in ("abc", "-1", "nan", "inf", "30.5"):
        monkeypatch.setenv("DSH_RETRY_DELAY", bad)
        with pytest.raises(UserError) as info:
            settings_from_env()
        assert info.value.code == "BAD_CONFIG" and "DSH_RETRY_DELAY" in info.value.message
        assert repr(bad) in info.value.message


@pytest.mark.parametrize(("raw", "delays"), [("0.01", [10, 20]), ("0", [0, 0])])
def test_a_hosts_sessions_retry_after_the_configured_delay(raw: str, delays: list[int], tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_RETRY_DELAY", raw)
    with FakeOpenAIServer() as server:
        assert server.api_key is not None
        monkeypatch.setenv("DSH_API_KEY", server.api_key)
        server.enqueue(error_reply(503, "busy"), error_reply(503, "still busy"), text_reply("done"))
        host = new_host(settings_from_env(), name="test-retry-delay")
        client = DshClient(host, caller="test")
        try:
            outcome = client.run("hello", cwd=str(tmp_path), model="fake-model", approve="deny",
                                 base_url=server.base_url, timeout=60)
        finally:
            client.close()
            host.shutdown()
        assert len(server.requests) == 3
    assert outcome.reason == {"kind": "completed"} and outcome.final_answer == "done"
    assert outcome.log_path is not None
    events = [json.loads(line) for line in Path(outcome.log_path).read_text().splitlines()]
    retries = [e for e in events if e["type"] == "llm/retry"]
    assert [r["delayMs"] for r in retries] == delays
    assert [r["error"]["code"] for r in retries] == ["SERVER_ERROR", "SERVER_ERROR"]
