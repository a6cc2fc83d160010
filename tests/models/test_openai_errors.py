"""Every provider failure → a coded ModelError, through the real SDK and real sockets."""

from __future__ import annotations

import socket

import pytest

from dsh_notebook.errors import ModelError
from dsh_notebook.models.accumulator import StreamCutError
from dsh_notebook.models.openai_compat import OpenAICompatAdapter, retry_after_ms
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.models.streams import collect, request
from tests.support.fake_openai import (
    FakeOpenAIServer,
    Reply,
    error_reply,
    text_reply,
    tool_call_reply,
)

CALLS = [("call_1", "read", '{"file_path": "a"}'), ("call_2", "read", '{"file_path": "b"}')]
OVERFLOW = ("This model's maximum context length is 65536 tokens. However, you requested 70000 "
            "tokens (70000 in the messages, 0 in the completion).")


async def failure(through: OpenAICompatAdapter, **options: object) -> ModelError:
    with pytest.raises(ModelError) as info:
        await collect(through, request(**options))  # type: ignore[arg-type]
    return info.value


@pytest.mark.parametrize(
    ("reply", "code", "retryable", "after_ms"),
    [
        (error_reply(403, "Permission denied for this project"), "AUTH", False, None),
        (error_reply(400, OVERFLOW), "CONTEXT_OVERFLOW", False, None),
        (error_reply(400, "too long", code="context_length_exceeded"), "CONTEXT_OVERFLOW", False, None),
        (error_reply(429, "Slow down", headers={"retry-after": "2"}), "RATE_LIMITED", True, 2000),
        (error_reply(429, "Slow down", headers={"retry-after-ms": "1500"}), "RATE_LIMITED", True, 1500),
        (error_reply(429, "Out of credit", code="insufficient_quota"), "RATE_LIMITED", False, None),
        (error_reply(500, "The server had an error"), "SERVER_ERROR", True, None),
        (error_reply(503, "Service Unavailable", headers={"retry-after": "1"}), "SERVER_ERROR", True, 1000),
        (error_reply(400, "Invalid value for 'temperature'"), "BAD_REQUEST", False, None),
        (error_reply(402, "Insufficient Balance"), "BAD_REQUEST", False, None),
        (error_reply(404, "Invalid URL (POST /v1/chat/completions)"), "UNKNOWN_MODEL", False, None),
    ],
)
async def test_http_errors_map_to_codes(fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter,
                                        reply: Reply, code: str, retryable: bool, after_ms: int | None) -> None:
    fake_openai.enqueue(reply)
    err = await failure(adapter)
    assert (err.code, err.retryable, err.status, err.retry_after_ms) == (code, retryable, reply.status, after_ms)
    assert reply.error is not None and reply.error["message"][:20] in err.message
    assert err.__cause__ is None and err.__suppress_context__


async def test_unknown_model_names_the_model(fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    err = await failure(adapter, model="gpt-nonexistent")
    assert err.code == "UNKNOWN_MODEL" and "gpt-nonexistent" in err.message and err.status == 404


async def test_wrong_key_is_auth_and_the_key_never_reaches_the_error(fake_openai: FakeOpenAIServer) -> None:
    secret = "sk-wrong-Secret-Key-ab12cd34ef56"
    model = OpenAICompatAdapter("deepseek", fake_openai.base_url, secret)
    err = await failure(model)
    await model.aclose()
    assert fake_openai.requests[0].error is not None and secret in fake_openai.requests[0].error
    assert err.code == "AUTH" and err.status == 401 and "DEEPSEEK_API_KEY" in err.message
    for text in (str(err), err.message, repr(err), str(err.to_dict())):
        assert secret not in text


async def test_a_key_quoted_in_any_error_body_is_redacted(fake_openai: FakeOpenAIServer) -> None:
    key = fake_openai.api_key or ""
    model = OpenAICompatAdapter("openai", fake_openai.base_url, key)
    fake_openai.enqueue(error_reply(500, f"upstream rejected {key}"), error_reply(400, f"bad key={key}"),
                        text_reply("x", error_event={"message": f"mid-stream {key}"}))
    errors = [await failure(model) for _ in range(3)]
    await model.aclose()
    assert [e.code for e in errors] == ["SERVER_ERROR", "BAD_REQUEST", "SERVER_ERROR"]
    assert all(key not in str(e) and "***" in str(e) for e in errors)


async def test_connection_refused_is_a_retryable_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAICompatAdapter("openai", f"http://127.0.0.1:{port}/v1", "sk-test-1234567890")
    err = await failure(model)
    await model.aclose()
    assert err.code == "CONNECTION" and err.retryable and err.status is None


async def test_a_server_that_never_answers_is_a_retryable_first_byte_timeout() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)  # accepts the TCP handshake, never reads or answers
        model = OpenAICompatAdapter("openai", f"http://127.0.0.1:{sock.getsockname()[1]}/v1",
                                    "sk-test-1234567890", timeout=0.3)
        err = await failure(model)
        await model.aclose()
    # nothing arrived: the server was slow (which timeout, after how long), retried as nothing was lost
    assert err.code == "MODEL_TIMEOUT" and err.retryable and "first-byte timeout" in err.message
    assert "sent nothing for 0.3 s" in err.message


async def test_stall_mid_stream_is_an_idle_timeout_never_retried_with_the_partial_text(
        fake_openai: FakeOpenAIServer) -> None:
    model = OpenAICompatAdapter("openai", fake_openai.base_url, fake_openai.api_key or "", timeout=0.3)
    fake_openai.enqueue(text_reply("partial answer", pieces=2, stall_after=2))
    err = await failure(model)
    await model.aclose()
    assert isinstance(err, StreamCutError) and err.code == "MODEL_TIMEOUT" and not err.retryable
    assert "idle timeout" in err.message and "--idle-timeout" in err.message
    assert err.partial_blocks == (TextBlock(text="partial"),)


@pytest.mark.parametrize("cut_after", [0, 1, 3])
async def test_cut_before_any_tool_call_completed_is_retryable(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter, cut_after: int) -> None:
    fake_openai.enqueue(tool_call_reply(CALLS, text="ab", pieces=2, cut_after=cut_after))
    err = await failure(adapter)
    assert isinstance(err, StreamCutError) and err.code == "STREAM_CUT"
    assert err.retryable and err.completed_tool_calls == ()


async def test_cut_after_a_tool_call_completed_is_not_retryable(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    # role chunk, 2 argument pieces of call_1, then the first piece of call_2, then the cut
    fake_openai.enqueue(tool_call_reply(CALLS, pieces=2, cut_after=4))
    err = await failure(adapter)
    assert isinstance(err, StreamCutError) and not err.retryable
    assert err.completed_tool_calls == ("call_1",) and "lost mid-stream" in err.message


@pytest.mark.parametrize("reply", [Reply(chunks=[]), Reply(chunks=[], done=False),
                                   Reply(chunks=[{"choices": [], "usage": {"prompt_tokens": 3}}])])
async def test_a_stream_with_nothing_in_it_is_empty_response(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter, reply: Reply) -> None:
    fake_openai.enqueue(reply)
    err = await failure(adapter)
    assert err.code == "EMPTY_RESPONSE" and err.retryable


@pytest.mark.parametrize(
    ("history", "words"),
    [
        ([user_text("a"), AssistantMessage(content=(ToolCallBlock(id="c1", name="read", arguments="{}"),)),
          user_text("b")], "did not have response messages: c1"),
        ([user_text("a"), tool_text("ghost", "orphan")], "must be a response to a preceeding message"),
        ([user_text("a"), AssistantMessage(content=(ToolCallBlock(id="c1", name="r", arguments="{}"),)),
          tool_text("c1", "x"), AssistantMessage(content=(ToolCallBlock(id="c1", name="r", arguments="{}"),)),
          tool_text("c1", "y")], "Duplicate tool_call id"),
        ([user_text("a"), AssistantMessage(content=(TextBlock(text="ok"),)),
          tool_text("c1", "x")], "must be a response"),
    ],
)
async def test_invalid_histories_are_refused_like_real_providers(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter, history: list, words: str) -> None:
    fake_openai.enqueue(text_reply("never sent"))
    err = await failure(adapter, messages=history)
    assert err.code == "BAD_REQUEST" and err.status == 400 and words in err.message
    assert fake_openai.pending == 1  # a refused request consumes no scripted reply


def test_retry_after_parses_seconds_milliseconds_and_dates() -> None:
    assert retry_after_ms({"retry-after": "0.5"}) == 500
    assert retry_after_ms({"retry-after-ms": "20"}) == 20
    assert retry_after_ms({}) is None
    assert retry_after_ms({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0  # in the past
    assert retry_after_ms({"retry-after": "soon"}) is None
