"""The price and context-window catalog (issue 12 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.errors import UserError
from dsh_notebook.session import catalog
from dsh_notebook.wire.events import Usage


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(catalog.PRICES_FILE_ENV, raising=False)
    monkeypatch.delenv(catalog.CONTEXT_WINDOW_ENV, raising=False)


def test_deepseek_cache_hit_and_miss_are_priced_apart() -> None:
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000, output_tokens=1_000_000)
    p = catalog.price("deepseek", "deepseek-chat")
    assert p is not None and p.cached_input < p.input
    assert catalog.cost_usd("deepseek", "deepseek-chat", usage) == pytest.approx(p.input + p.cached_input + p.output)
    assert p.as_of == catalog.PRICES_AS_OF


def test_every_named_model_has_price_and_window() -> None:
    names = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o3", "o4-mini",
             "gpt-5", "gpt-5-mini", "gpt-5-nano"]
    for name in names:
        assert catalog.price("openai", name) is not None, name
        assert (catalog.context_window("openai", name) or 0) >= 128_000, name
    assert catalog.context_window("deepseek", "deepseek-reasoner") == 128_000


def test_unknown_model_costs_none_never_a_guess() -> None:
    assert catalog.price("openai", "gpt-4o-ultra") is None
    assert catalog.cost_usd("vllm", "qwen3", Usage(input_tokens=10, output_tokens=10)) is None
    assert catalog.context_window("vllm", "qwen3") is None
    assert catalog.cost_usd("openai", "gpt-4o", None) is None


def test_snapshots_bare_names_and_script() -> None:
    assert catalog.price("openai", "gpt-4o-2024-08-06") == catalog.price("openai", "gpt-4o")
    assert catalog.price("openai", "deepseek-chat") == catalog.price("deepseek", "deepseek-chat")
    assert catalog.price("deepseek", "gpt-4o") is None
    assert catalog.cost_usd("script", "auto", Usage(input_tokens=5, output_tokens=5)) == 0.0


def test_context_window_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"vllm:qwen3": {"contextWindow": 32768}}))
    monkeypatch.setenv(catalog.PRICES_FILE_ENV, str(prices))
    assert catalog.context_window("vllm", "qwen3") == 32768
    monkeypatch.setenv(catalog.CONTEXT_WINDOW_ENV, "50000")
    assert catalog.context_window("vllm", "qwen3") == 50000
    assert catalog.context_window("vllm", "qwen3", override=1000) == 1000
    monkeypatch.setenv(catalog.CONTEXT_WINDOW_ENV, "lots")
    with pytest.raises(UserError) as err:
        catalog.context_window("vllm", "qwen3")
    assert err.value.code == "BAD_CONFIG"


def test_prices_file_overrides_and_adds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({
        "deepseek:deepseek-chat": {"output": 2.0},
        "my-finetune": {"input": 3.0, "output": 12.0},
    }))
    monkeypatch.setenv(catalog.PRICES_FILE_ENV, str(prices))
    chat = catalog.price("deepseek", "deepseek-chat")
    assert chat is not None and chat.output == 2.0 and chat.input == 0.28 and chat.source == str(prices)
    tuned = catalog.price("openai", "my-finetune")
    assert tuned is not None and tuned.cached_input == 3.0
    assert catalog.context_window("openai", "my-finetune") is None
    # edited on disk → reloaded
    prices.write_text(json.dumps({"my-finetune": {"input": 1.0, "output": 1.0, "contextWindow": 9000}}))
    assert catalog.context_window("openai", "my-finetune") == 9000
    assert catalog.price("deepseek", "deepseek-chat") == catalog.BUILTIN[("deepseek", "deepseek-chat")].price


@pytest.mark.parametrize("content", [
    "not json", "[1]", '{"x": 3}', '{"x": {"input": -1, "output": 1}}', '{"x": {"input": 1}}',
    '{"x": {"price": 1}}', '{"x": {"contextWindow": 0}}',
])
def test_bad_prices_file_is_a_coded_error(tmp_path: Path, content: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(content)
    with pytest.raises(UserError) as err:
        catalog.load_catalog(prices)
    assert err.value.code == "BAD_CONFIG"
    with pytest.raises(UserError):
        catalog.load_catalog(tmp_path / "missing.json")
