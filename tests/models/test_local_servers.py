"""Issue 20 on the adapter, against loopback servers: the overflow wordings of every local server,
the first-byte / idle timeouts (no total timeout), the request options sent, the server's window."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from dsh_notebook.errors import ModelError
from dsh_notebook.models.accumulator import StreamCutError
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.models.server_window import probe_window, server_window
from dsh_notebook.wire.messages import TextBlock
from tests.models.streams import assemble, collect, request
from tests.support.fake_openai import FakeOpenAIServer, error_reply, text_reply

# what each server answers when the prompt does not fit (measured or from their sources)
WORDINGS = [
    ("llama.cpp", error_reply(400, "request (5031 tokens) exceeds the available context size (4096 tokens), "
                                   "try increasing it", type="exceed_context_size_error")),
    ("llama.cpp, type only", error_reply(400, "the request is too big", type="exceed_context_size_error")),
    ("vLLM", error_reply(400, "This model's maximum context length is 4096 tokens. However, you requested "
                              "5000 tokens (4900 in the messages, 100 in the completion).")),
    ("vLLM, newer", error_reply(400, "The decoder prompt (length 5000) is longer than the maximum model length "
                                     "of 4096.")),
    ("Ollama", error_reply(500, "input length exceeds the context length")),
    ("LM Studio", error_reply(400, "Trying to keep the first 5000 tokens when context the overflows. However, "
                                   "the model is loaded with context length of only 4096 tokens")),
]


def slow_adapter(fake: FakeOpenAIServer, *, first: float, idle: float) -> OpenAICompatAdapter:
    return OpenAICompatAdapter("openai", fake.base_url, fake.api_key or "", first_byte_timeout=first,
                               idle_timeout=idle)


@pytest.mark.parametrize(("server", "reply"), WORDINGS, ids=[w[0] for w in WORDINGS])
async def test_every_servers_overflow_wording_is_context_overflow_never_retried_as_generic(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter, server: str, reply: Any) -> None:
    fake_openai.enqueue(reply)
    with pytest.raises(ModelError) as info:
        await collect(adapter)
    assert info.value.code == "CONTEXT_OVERFLOW" and not info.value.retryable


async def test_a_slow_first_chunk_within_the_first_byte_timeout_is_waited_for(fake_openai: FakeOpenAIServer) -> None:
    # the head arrives at once, the first chunk after 1.5 s: longer than the idle timeout, which
    # only counts between chunks (the chunks after it come at once: a second of margin under load)
    model = slow_adapter(fake_openai, first=10.0, idle=1.0)
    fake_openai.enqueue(text_reply("slow but fine", pieces=2, first_delay=1.5))
    message, reason = assemble(await collect(model))
    await model.aclose()
    assert reason == "stop" and message.content == (TextBlock(text="slow but fine"),)


async def test_no_total_timeout_on_a_reply_still_arriving(fake_openai: FakeOpenAIServer) -> None:
    # 30 pieces 0.1 s apart: 3 s in all, above both timeouts; each gap a twentieth of the idle one (a
    # gap of 0.15 s against 0.5 s once stretched past it on a loaded CI machine)
    model = slow_adapter(fake_openai, first=2.0, idle=2.0)
    fake_openai.enqueue(text_reply("one two three four five six seven eight", pieces=30, gap=0.1))
    message, reason = assemble(await collect(model))
    await model.aclose()
    assert reason == "stop" and message.text == "one two three four five six seven eight"


@pytest.mark.parametrize("where", ["head", "first chunk"])
async def test_nothing_before_the_first_byte_timeout_is_a_retryable_model_timeout(
        fake_openai: FakeOpenAIServer, where: str) -> None:
    model = slow_adapter(fake_openai, first=0.3, idle=30.0)
    delay = {"head_delay": 5.0} if where == "head" else {"first_delay": 5.0}
    fake_openai.enqueue(text_reply("late", **delay))
    with pytest.raises(ModelError) as info:
        await collect(model)
    await model.aclose()
    err = info.value
    assert err.code == "MODEL_TIMEOUT" and err.retryable  # nothing was received: asking again loses nothing
    assert "sent nothing for 0.3 s (first-byte timeout" in err.message and "--first-byte-timeout" in err.message


async def test_a_stall_after_chunks_is_an_idle_timeout_never_retried(fake_openai: FakeOpenAIServer) -> None:
    model = slow_adapter(fake_openai, first=30.0, idle=1.0)  # the two pieces before the stall: a second apart at most
    fake_openai.enqueue(text_reply("half an answer", pieces=3, stall_after=2))
    with pytest.raises(StreamCutError) as info:
        await collect(model)
    await model.aclose()
    err = info.value
    assert err.code == "MODEL_TIMEOUT" and not err.retryable and "idle timeout" in err.message
    assert err.partial_blocks and isinstance(err.partial_blocks[0], TextBlock)


async def test_max_tokens_and_options_reach_the_request(fake_openai: FakeOpenAIServer,
                                                        adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(text_reply("ok"))
    config = {"max_tokens": 64, "temperature": 0.2, "seed": 7, "stop": ["\n\n"], "top_k": 40}
    await collect(adapter, request(config=config))
    body = fake_openai.requests[-1].body
    assert (body["max_tokens"], body["temperature"], body["seed"], body["stop"]) == (64, 0.2, 7, ["\n\n"])
    assert body["top_k"] == 40  # a provider extra, in the body (extra_body)


async def test_openai_reasoning_models_get_the_limit_as_max_completion_tokens(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.models = ("o3-mini", "gpt-5-mini", "fake-model")
    for model, key in (("o3-mini", "max_completion_tokens"), ("gpt-5-mini", "max_completion_tokens"),
                       ("fake-model", "max_tokens")):
        fake_openai.enqueue(text_reply("ok"))
        await collect(adapter, request(model=model, config={"max_tokens": 64}))
        body = fake_openai.requests[-1].body
        assert body[key] == 64
        assert ("max_tokens" in body) == (key == "max_tokens")


# --- the window the server reports ---------------------------------------------------------------

ROUTES: dict[str, dict[tuple[str, str], Any]] = {
    "llama.cpp": {("GET", "/props"): {"default_generation_settings": {"n_ctx": 4096}}},
    "llama.cpp, old": {("GET", "/props"): {"n_ctx": 2048}},
    "vLLM": {("GET", "/v1/models"): {"data": [{"id": "other", "max_model_len": 1},
                                              {"id": "m", "max_model_len": 32768}]}},
    "LM Studio": {("GET", "/api/v0/models"): {"data": [{"id": "m", "max_context_length": 131072}]}},
    "Ollama": {("POST", "/api/show"): {"parameters": "temperature 0.7\nnum_ctx 8192",
                                        "model_info": {"llama.context_length": 131072}}},
    "Ollama, model info": {("POST", "/api/show"): {"model_info": {"qwen2.context_length": 32768}}},
    "none": {},
}
EXPECTED = {"llama.cpp": 4096, "llama.cpp, old": 2048, "vLLM": 32768, "LM Studio": 131072, "Ollama": 8192,
            "Ollama, model info": 32768, "none": None}


@pytest.fixture
def json_server() -> Iterator[tuple[str, dict[tuple[str, str], Any], list[str]]]:
    routes: dict[tuple[str, str], Any] = {}
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def answer(self, method: str) -> None:
            seen.append(f"{method} {self.path}")
            body = routes.get((method, self.path))
            required = routes.get(("AUTH", ""))  # a server guarded by a key (vLLM --api-key)
            if required is not None and self.headers.get("authorization") != f"Bearer {required}":
                body = None
            data = json.dumps(body).encode() if body is not None else b'{"error": "not found"}'
            self.send_response(200 if body is not None else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self.answer("GET")

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.answer("POST")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", routes, seen
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind", list(ROUTES))
async def test_the_window_comes_from_whichever_server_answers(
        json_server: tuple[str, dict[tuple[str, str], Any], list[str]], kind: str) -> None:
    url, routes, _ = json_server
    routes.update(ROUTES[kind])
    assert await probe_window(url, "m") == EXPECTED[kind]


async def test_the_window_is_asked_once_per_model_and_cached(
        json_server: tuple[str, dict[tuple[str, str], Any], list[str]]) -> None:
    url, routes, seen = json_server
    routes.update(ROUTES["llama.cpp"])
    model = OpenAICompatAdapter("openai", url, "not-needed", model="cached-model")
    assert model.known_window() is None  # never asks by itself
    assert await model.server_window() == 4096
    asked = len(seen)
    routes.clear()
    assert await model.server_window() == 4096 and await server_window(url, "cached-model") == 4096
    assert len(seen) == asked and model.known_window() == 4096
    await model.aclose()


async def test_the_probe_carries_the_endpoints_key(
        json_server: tuple[str, dict[tuple[str, str], Any], list[str]]) -> None:
    url, routes, _ = json_server
    routes.update({**ROUTES["vLLM"], ("AUTH", ""): "sk-local-0123456789"})
    guarded = OpenAICompatAdapter("openai", url, "sk-local-0123456789", model="m")
    assert await guarded.server_window() == 32768
    await guarded.aclose()
    assert await probe_window(url, "m") is None  # without the key: refused


async def test_a_server_that_is_not_there_has_no_window_quickly() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens: refused at once
    assert await probe_window(f"http://127.0.0.1:{port}/v1", "m", timeout=1.0) is None


def test_the_providers_own_endpoints_are_never_probed() -> None:
    model = OpenAICompatAdapter("openai", "https://api.openai.com/v1", "sk-test-1234567890", model="gpt-4o")
    assert model.probe_window is False and model.known_window() is None
