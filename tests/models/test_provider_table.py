"""The provider table's conformance test (issue 40 item 2): every row of
:data:`dsh_notebook.providers.PROVIDERS` is complete and consistent, and runs end to end — routed,
spoken to through the real ``openai`` SDK on a loopback server (``--base-url``), its overflow
wording understood, its window probe answered, its requests named in telemetry, its key scrubbed.

**A new row needs its test row here** (:data:`SAMPLES`: a model it serves, the error it answers when
a prompt does not fit, and for a self-hosted server what its probe answers);
:func:`test_every_row_has_a_test_row` fails until it has one, and every other test then says which
rule the row breaks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.config import (
    Settings,
    check_base_url,
    normalize_model_id,
    parse_model_id,
    settings_from_env,
)
from dsh_notebook.errors import ModelError, UserError, redact
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.models.routing import PLACEHOLDER_KEY, resolve_adapter
from dsh_notebook.observe.otel_spans import build_turn_spans
from dsh_notebook.providers import (
    LOCAL_PREFIXES,
    PROVIDERS,
    Provider,
    known_prefixes,
    telemetry_name,
)
from dsh_notebook.session.catalog import default_catalog
from dsh_notebook.session.session import Session
from dsh_notebook.testing.openai_server import (
    PROBES,
    FakeOpenAIServer,
    Reply,
    error_reply,
    text_reply,
)
from dsh_notebook.wire.events import TurnEnd
from tests.conftest import SCRUBBED, scrub
from tests.models.streams import assemble, collect, request


@dataclass(frozen=True)
class Sample:
    """A row's test row: a model it serves, what it answers when the prompt does not fit (as the
    server words it), and for a self-hosted server its probe's JSON answer and the window it says."""

    model: str
    overflow: Reply
    window: tuple[Any, int] | None = None


SAMPLES: dict[str, Sample] = {
    "deepseek": Sample("deepseek-chat", error_reply(
        400, "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens "
             "(139000 in the messages, 1000 in the completion). Please reduce the length of the messages.")),
    "openai": Sample("gpt-4o-mini", error_reply(
        400, "This model's maximum context length is 128000 tokens. However, your messages resulted in "
             "130000 tokens. Please reduce the length of the messages.", code="context_length_exceeded")),
    "llama.cpp": Sample("qwen2.5-0.5b-instruct", error_reply(
        400, "request (5031 tokens) exceeds the available context size (4096 tokens), try increasing it",
        type="exceed_context_size_error"), ({"default_generation_settings": {"n_ctx": 4096}}, 4096)),
    "vllm": Sample("Qwen/Qwen3-8B", error_reply(
        400, "The decoder prompt (length 5000) is longer than the maximum model length of 4096."),
        ({"data": [{"id": "other", "max_model_len": 1}, {"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}, 32768)),
    "lmstudio": Sample("qwen3-4b", error_reply(
        400, "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded "
             "with context length of only 4096 tokens"),
        ({"data": [{"id": "qwen3-4b", "max_context_length": 131072, "loaded_context_length": 8192}]}, 8192)),
    "ollama": Sample("llama3.2:3b", error_reply(500, "input length exceeds the context length"),
                     ({"parameters": "temperature 0.7\nnum_ctx 8192", "model_info": {"llama.context_length": 131072}},
                      8192)),
}

ROWS = {row.name: row for row in PROVIDERS}


def rows(kind: str = "all") -> list[Any]:
    chosen = [r for r in PROVIDERS if kind == "all" or (kind == "hosted") == bool(r.prefix)]
    return [pytest.param(r, id=r.name) for r in chosen]


def model_id(row: Provider, model: str) -> str:
    """What a user types for ``model`` on this row (a server: the bare name, with ``--base-url``)."""
    return f"{row.prefix}:{model}" if row.prefix else model


# --- the rows themselves ---------------------------------------------------------------------------


def test_every_row_has_a_test_row() -> None:
    assert len(ROWS) == len(PROVIDERS), "two rows share a name"
    assert set(ROWS) == set(SAMPLES), (
        f"rows without a test row in SAMPLES: {sorted(set(ROWS) - set(SAMPLES))}; "
        f"test rows without a row: {sorted(set(SAMPLES) - set(ROWS))}")


@pytest.mark.parametrize("row", rows())
def test_every_row_is_complete(row: Provider) -> None:
    assert row.display_name.strip(), "a display name"
    assert row.overflow_codes or row.overflow_wordings, "how it says a prompt does not fit"
    for wording in row.overflow_wordings:
        re.compile(wording)
    if row.prefix:  # a hosted provider
        assert row.prefix == row.name and re.fullmatch(r"[a-z][a-z0-9_-]*", row.prefix), "a lower-case prefix, its name"
        assert row.prefix not in LOCAL_PREFIXES and row.prefix in known_prefixes()
        assert row.key_env and re.fullmatch(r"[A-Z][A-Z0-9_]*_API_KEY", row.key_env), "its key variable, NAME_API_KEY"
        assert row.base_url and row.base_url.startswith("https://") and check_base_url(row.base_url) == row.base_url
        assert row.domain is None or row.serves(row.base_url), "its own endpoint is under its domain"
        assert row.otel_name and re.fullmatch(r"[a-z][a-z0-9_.]*", row.otel_name), "its gen_ai.provider.name"
        assert row.suggested and row.default_model == row.suggested[0], "a default model"
        names = [m.name for m in row.models]
        assert len(set(names)) == len(names), "each known model once"
        for m in row.models:
            assert min(m.input, m.cached_input, m.output) >= 0 and m.cached_input <= m.input and m.context_window > 0
    else:  # a self-hosted server, reached with --base-url
        assert not (row.key_env or row.base_url or row.models or row.otel_name), "a server has no endpoint of its own"
        assert row.window_probe is not None, "how it reports its context window"
        assert set(row.window_probe.routes()) <= PROBES, "the loopback server answers its probe"


def test_prefixes_and_key_variables_are_unique() -> None:
    prefixes = [r.prefix for r in PROVIDERS if r.prefix]
    keys = [r.key_env for r in PROVIDERS if r.key_env]
    assert len(set(prefixes)) == len(prefixes) and len(set(keys)) == len(keys)
    assert known_prefixes() == {*prefixes, *LOCAL_PREFIXES}


# --- config, routing and keys ----------------------------------------------------------------------


@pytest.mark.parametrize("row", rows("hosted"))
def test_prefix_model_routes_to_the_rows_own_endpoint_with_its_key(row: Provider, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    assert row.key_env and row.default_model
    wanted = f"{row.prefix}:{row.default_model}"
    assert parse_model_id(normalize_model_id(wanted, "http://127.0.0.1:9/v1")) == (row.prefix, row.default_model)
    with pytest.raises(UserError) as info:
        resolve_adapter(Settings(), wanted)
    assert info.value.code == "NO_API_KEY" and row.key_env in info.value.message
    secret = f"sk-{row.name}-conformance-0123456789"
    monkeypatch.setenv(row.key_env, secret)
    settings = settings_from_env().with_overrides(model=wanted)
    assert settings.resolved_key() == secret and settings.resolved_base_url() == row.base_url
    assert secret not in redact(f"the key is {secret}")  # read once: masked wherever it is shown
    adapter = resolve_adapter(settings, wanted)
    assert isinstance(adapter, OpenAICompatAdapter)
    assert (adapter.provider, adapter.model, adapter.base_url) == (row.prefix, row.default_model, row.base_url)
    assert adapter._client.api_key == secret and adapter.key_env == row.key_env
    assert adapter.send_reasoning == row.send_reasoning
    assert not adapter.probe_window, "a provider's own endpoint is never probed"
    # its key goes to its own host only
    elsewhere = resolve_adapter(settings, wanted, base_url="http://127.0.0.1:9/v1")
    assert isinstance(elsewhere, OpenAICompatAdapter) and elsewhere._client.api_key == PLACEHOLDER_KEY


@pytest.mark.parametrize("row", rows("hosted"))
def test_the_test_suite_scrubs_the_rows_key_variable(row: Provider) -> None:
    assert row.key_env in SCRUBBED
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(row.key_env, "sk-from-the-machine-0123456789")
        scrub(mp)  # what every test's autouse fixture runs
        assert row.key_env not in os.environ


def test_the_autouse_scrub_ran_for_this_test() -> None:
    assert not [name for name in SCRUBBED if name in os.environ]


# --- through the real SDK, on a loopback server ----------------------------------------------------


@pytest.mark.parametrize("row", rows())
async def test_every_row_runs_through_the_sdk_on_a_loopback_server(row: Provider,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    sample = SAMPLES[row.name]
    if row.key_env:  # a provider's key must never reach another base URL
        monkeypatch.setenv(row.key_env, f"sk-{row.name}-never-sent-0123456789")
    windows = {} if sample.window is None or row.window_probe is None else dict.fromkeys(row.window_probe.routes(), sample.window[0])
    with FakeOpenAIServer(api_key=None, models=(sample.model,), windows=windows) as server:
        adapter = resolve_adapter(settings_from_env(), model_id(row, sample.model), base_url=server.base_url)
        assert isinstance(adapter, OpenAICompatAdapter) and adapter.provider == (row.prefix or "openai")
        assert adapter.send_reasoning == row.send_reasoning
        try:
            server.enqueue(text_reply(f"hello from {row.display_name}"))
            message, reason = assemble(await collect(adapter, request(model=sample.model)))
            assert reason == "stop" and message.text == f"hello from {row.display_name}"
            assert server.requests[-1].headers["authorization"] == f"Bearer {PLACEHOLDER_KEY}"

            server.enqueue(sample.overflow)
            with pytest.raises(ModelError) as info:
                await collect(adapter, request(model=sample.model))
            assert info.value.code == "CONTEXT_OVERFLOW" and not info.value.retryable
            error = sample.overflow.error or {}
            assert row.overflows(str(error.get("code") or error.get("type")), str(error["message"])), (
                "the row's own wordings (not only another row's) name its overflow")

            window = await adapter.server_window()
            assert window == (sample.window[1] if sample.window else None)
            if row.window_probe is not None:
                assert {(p.method, p.path) for p in server.probes} >= {row.window_probe.routes()[0]}
        finally:
            await adapter.aclose()


@pytest.mark.parametrize("row", rows())
async def test_every_rows_requests_are_named_in_telemetry(row: Provider, tmp_path: Any) -> None:
    sample = SAMPLES[row.name]
    with FakeOpenAIServer(api_key=None, models=(sample.model,)) as server:
        settings = settings_from_env()
        wanted = normalize_model_id(model_id(row, sample.model), server.base_url)
        agent = Agent(Session("s_provider", cwd=str(tmp_path)), AgentConfig(model=wanted, retry_base_ms=1),
                      adapter_for=lambda m: resolve_adapter(settings, m, base_url=server.base_url))
        server.enqueue(text_reply("named"))
        agent.followup("hi")
        await agent.wait_idle()
        await agent.close()
    events = list(agent.session.events)
    end = next(e for e in events if isinstance(e, TurnEnd))
    assert end.reason.kind == "completed", end.reason
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    build_turn_spans(tracer_provider.get_tracer("test"), "s_provider", events)
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    expected = row.otel_name if row.prefix else telemetry_name("openai")
    assert chat.attributes is not None and chat.attributes["gen_ai.provider.name"] == expected


# --- prices ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", rows("hosted"))
def test_every_known_model_is_priced_as_its_row_says(row: Provider) -> None:
    catalog = default_catalog()
    assert row.prefix
    for m in row.models:
        price = catalog.price(row.prefix, m.name)
        assert price is not None and (price.input, price.cached_input, price.output) == (m.input, m.cached_input, m.output)
        assert catalog.context_window(row.prefix, m.name) == m.context_window
