"""resolve_adapter: model ids and settings → adapters; keys go only where they belong."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_notebook.config import Settings, settings_from_env
from dsh_notebook.errors import UserError
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.models.replay import ReplayModel
from dsh_notebook.models.routing import PLACEHOLDER_KEY, resolve_adapter
from tests.models.streams import assemble, collect, request
from tests.support.fake_openai import FakeOpenAIServer, text_reply


def _key(adapter: object) -> str:
    assert isinstance(adapter, OpenAICompatAdapter)
    return adapter._client.api_key


def test_deepseek_without_a_key_names_the_variable_to_set() -> None:
    with pytest.raises(UserError) as info:
        resolve_adapter(Settings(), "deepseek:deepseek-chat")
    assert info.value.code == "NO_API_KEY" and "DEEPSEEK_API_KEY" in info.value.message
    with pytest.raises(UserError) as info:
        resolve_adapter(Settings(), "openai:gpt-4o-mini")
    assert "OPENAI_API_KEY" in info.value.message


def test_deepseek_uses_its_key_default_url_and_sends_reasoning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek-1234567890")
    adapter = resolve_adapter(settings_from_env(), "deepseek:deepseek-chat")
    assert isinstance(adapter, OpenAICompatAdapter)
    assert adapter.provider == "deepseek" and adapter.send_reasoning
    assert adapter.base_url == "https://api.deepseek.com" and _key(adapter) == "sk-deepseek-1234567890"


def test_openai_gets_no_reasoning_and_dsh_api_key_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-1234567890")
    monkeypatch.setenv("DSH_API_KEY", "sk-dsh-1234567890")
    adapter = resolve_adapter(settings_from_env(), "openai:gpt-4o-mini")
    assert isinstance(adapter, OpenAICompatAdapter) and not adapter.send_reasoning
    assert _key(adapter) == "sk-dsh-1234567890"


def test_a_provider_key_is_never_sent_to_another_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-1234567890")
    adapter = resolve_adapter(settings_from_env(), "qwen2.5", base_url="http://127.0.0.1:8000/v1")
    assert _key(adapter) == PLACEHOLDER_KEY
    assert isinstance(adapter, OpenAICompatAdapter) and adapter.base_url == "http://127.0.0.1:8000/v1"


def test_routed_requests_have_first_byte_and_idle_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    # the SDK's own default waits 600 s for each silent read: a hung server held a turn for ~40 min;
    # a local server may take minutes to process a prompt on CPU: loopback waits longer for its first byte
    for var in ("DSH_TIMEOUT", "DSH_FIRST_BYTE_TIMEOUT", "DSH_IDLE_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    local = resolve_adapter(settings_from_env(), "qwen2.5", base_url="http://127.0.0.1:8000/v1")
    remote = resolve_adapter(settings_from_env(), "qwen2.5", base_url="https://models.example.com/v1")
    assert isinstance(local, OpenAICompatAdapter) and isinstance(remote, OpenAICompatAdapter)
    assert (local.first_byte_timeout, local.idle_timeout) == (600.0, 120.0)
    assert (remote.first_byte_timeout, remote.idle_timeout) == (120.0, 120.0)
    assert local._client.timeout.read is None and local._client.timeout.connect == 10.0  # our timers decide
    monkeypatch.setenv("DSH_TIMEOUT", "2.5")
    adapter = resolve_adapter(settings_from_env(), "qwen2.5", base_url="https://models.example.com/v1")
    assert isinstance(adapter, OpenAICompatAdapter)
    assert (adapter.first_byte_timeout, adapter.idle_timeout) == (2.5, 2.5) and adapter._client.timeout.connect == 2.5
    monkeypatch.setenv("DSH_FIRST_BYTE_TIMEOUT", "900")
    monkeypatch.setenv("DSH_IDLE_TIMEOUT", "30")
    adapter = resolve_adapter(settings_from_env(), "qwen2.5", base_url="http://127.0.0.1:8000/v1")
    assert isinstance(adapter, OpenAICompatAdapter)
    assert (adapter.first_byte_timeout, adapter.idle_timeout) == (900.0, 30.0)
    for var in ("DSH_TIMEOUT", "DSH_FIRST_BYTE_TIMEOUT", "DSH_IDLE_TIMEOUT"):
        for bad in ("abc", "0", "-1", "nan", "inf"):
            monkeypatch.setenv(var, bad)
            with pytest.raises(UserError) as info:
                settings_from_env()
            assert info.value.code == "BAD_CONFIG" and var in info.value.message
        monkeypatch.delenv(var)


def test_an_unknown_provider_without_base_url_is_a_clear_user_error() -> None:
    with pytest.raises(UserError) as info:
        resolve_adapter(Settings(), "ollama:llama3")
    assert info.value.code == "UNKNOWN_PROVIDER" and "--base-url" in info.value.message
    # with a base URL an unknown prefix is part of the model name (issue 13 item 5)
    adapter = resolve_adapter(Settings(base_url="http://localhost:11434/v1"), "ollama:llama3")
    assert isinstance(adapter, OpenAICompatAdapter) and adapter.provider == "openai"


def test_replay_ids_route_to_the_replay_model(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_text('{"type":"session","version":1,"id":"s","cwd":"/","createdAt":1}\n')
    assert isinstance(resolve_adapter(Settings(), f"replay:{log}"), ReplayModel)
    with pytest.raises(UserError) as info:
        resolve_adapter(Settings(), f"replay:{tmp_path / 'missing.jsonl'}")
    assert info.value.code == "LOG_NOT_FOUND"


def test_script_ids_route_to_the_scripted_model() -> None:
    scripted = pytest.importorskip("dsh_notebook.models.scripted")
    adapter = resolve_adapter(Settings(), "script:help")
    assert isinstance(adapter, scripted.ScriptedModel)


async def test_a_routed_adapter_streams_from_a_base_url() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("routed"))
        adapter = resolve_adapter(Settings(api_key=server.api_key), "fake-model", base_url=server.base_url)
        message, _ = assemble(await collect(adapter, request()))
        assert message.text == "routed"
        assert server.requests[0].headers["authorization"] == f"Bearer {server.api_key}"


def test_the_scripted_models_pace_comes_from_dsh_script_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_notebook.models.scripted import ScriptedModel

    monkeypatch.delenv("DSH_SCRIPT_PACE", raising=False)
    adapter = resolve_adapter(settings_from_env(), "script:auto")
    assert isinstance(adapter, ScriptedModel) and adapter.pace == 0.02  # a pace a class can follow
    for raw, pace in (("0", 0.0), ("0.5", 0.5), (" 10 ", 10.0), ("", 0.02)):
        monkeypatch.setenv("DSH_SCRIPT_PACE", raw)
        adapter = resolve_adapter(settings_from_env(), "script:readme")
        assert isinstance(adapter, ScriptedModel) and adapter.pace == pace
    for bad in ("abc", "-0.1", "10.5", "nan", "inf"):
        monkeypatch.setenv("DSH_SCRIPT_PACE", bad)
        with pytest.raises(UserError) as info:
            settings_from_env()
        assert info.value.code == "BAD_CONFIG" and "DSH_SCRIPT_PACE" in info.value.message and repr(bad) in info.value.message
