"""OpenAICompatAdapter through the real ``openai`` SDK over real HTTP/SSE to the loopback server."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2
import pytest

from dsh_notebook.models.base import TextDelta, ToolCallDelta, UsageChunk
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.wire.events import ToolSchema
from dsh_notebook.wire.messages import (
    AnyMessage,
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.models.streams import assemble, collect, request
from tests.support.fake_openai import (
    FakeOpenAIServer,
    Reply,
    multibyte_split_points,
    reasoning_chunks,
    text_reply,
    tool_call_reply,
)

CALLS = [("call_1", "read", '{"file_path": "README.md"}'), ("call_2", "grep", '{"pattern": "名前 ✓"}')]
READ = ToolSchema(name="read", description="Read a file.",
                  parameters={"type": "object", "properties": {"file_path": {"type": "string"}}})


async def test_text_reply_and_the_request_on_the_wire(fake_openai: FakeOpenAIServer,
                                                      adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(text_reply("Hello there", pieces=4))
    chunks = await collect(adapter, request(tools=(READ,), config={"max_tokens": 64, "thinking": {"type": "off"}}))
    message, reason = assemble(chunks)
    assert message.text == "Hello there" and reason == "stop"
    assert len([c for c in chunks if isinstance(c, TextDelta)]) == 4
    assert next(c for c in chunks if isinstance(c, UsageChunk)).usage.output_tokens == 5
    (sent,) = fake_openai.requests
    assert sent.status == 200 and sent.headers["authorization"] == f"Bearer {fake_openai.api_key}"
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["messages"] == [{"role": "user", "content": "hi"}]
    assert sent.body["tools"] == [{"type": "function", "function": READ.model_dump()}]
    assert sent.body["max_tokens"] == 64 and sent.body["thinking"] == {"type": "off"}


@pytest.mark.parametrize(
    "quirks", [(), ("repeat-ids",), ("index-zero",), ("no-index",), ("finish-stop",), ("no-finish",),
               ("index-zero", "repeat-ids", "finish-stop")])
async def test_tool_calls_with_server_quirks(fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter,
                                             quirks: tuple[str, ...]) -> None:
    fake_openai.enqueue(tool_call_reply(CALLS, quirks=quirks, pieces=4))
    message, reason = assemble(await collect(adapter))
    assert reason == "tool-calls"
    assert message.tool_calls == tuple(ToolCallBlock(id=i, name=n, arguments=a) for i, n, a in CALLS)


async def test_sse_split_across_tcp_writes_and_inside_utf8_characters(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    text = "Grüße — 你好 🌍 done"
    reply = tool_call_reply(CALLS, text=text, pieces=2)
    reply.split_at = multibyte_split_points(reply.body())
    assert len(reply.split_at) >= 8 and len(reply.pieces()) == len(reply.split_at) + 1
    fake_openai.enqueue(reply, text_reply(text, split_every=3, gap=0.0005))
    message, _ = assemble(await collect(adapter))
    assert message.text == text and message.tool_calls[1].arguments == CALLS[1][2]
    message, _ = assemble(await collect(adapter))
    assert message.text == text


async def test_reasoning_content_is_streamed_as_a_reasoning_block(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(Reply(reasoning_chunks("Think first.", "Answer.")))
    message, _ = assemble(await collect(adapter))
    assert [b.type for b in message.content] == ["reasoning", "text"]
    assert message.content[0].text == "Think first."  # type: ignore[union-attr]


async def test_max_tokens_drops_cut_tool_calls(fake_openai: FakeOpenAIServer,
                                               adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(tool_call_reply(CALLS, text="I will", finish="length"))
    chunks = await collect(adapter)
    message, reason = assemble(chunks)
    assert reason == "max-tokens" and message.content == (TextBlock(text="I will"),)
    assert any(isinstance(c, ToolCallDelta) for c in chunks)  # streamed live, dropped at the end


async def test_a_full_tool_round_trip_is_accepted_by_the_strict_server(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(tool_call_reply(CALLS[:1]), text_reply("It says hello."))
    first, _ = assemble(await collect(adapter, request(tools=(READ,))))
    history: list[AnyMessage] = [user_text("read it"), first, tool_text("call_1", "hello")]
    second, _ = assemble(await collect(adapter, request(history, tools=(READ,))))
    assert second.text == "It says hello."
    sent = fake_openai.requests[-1].messages
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": CALLS[0][2]}}]}
    assert sent[2] == {"role": "tool", "tool_call_id": "call_1", "content": "hello"}
    assert all(r.status == 200 for r in fake_openai.requests)


async def test_sdk_reuses_the_connection_after_a_stream(fake_openai: FakeOpenAIServer,
                                                        adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(*(text_reply(f"reply {n}") for n in range(5)))
    texts = [assemble(await collect(adapter))[0].text for _ in range(5)]
    assert texts == [f"reply {n}" for n in range(5)] and fake_openai.pending == 0


async def test_closing_the_stream_early_leaves_the_adapter_usable(
        fake_openai: FakeOpenAIServer, adapter: OpenAICompatAdapter) -> None:
    fake_openai.enqueue(text_reply("never ends", stall_after=2, stall_seconds=30), text_reply("next"))
    stream = adapter.stream(request())
    assert isinstance(stream, AsyncGenerator)
    first = await stream.__anext__()
    assert first.type == "block-start"
    await stream.aclose()  # what task cancellation does to the agent's loop
    assert assemble(await collect(adapter))[0].text == "next"


async def _deepseek_round_trip(server: FakeOpenAIServer, *, send_reasoning: bool) -> OpenAICompatAdapter:
    model = OpenAICompatAdapter("deepseek", server.base_url, server.api_key or "", send_reasoning=send_reasoning)
    server.enqueue(tool_call_reply(CALLS[:1], reasoning="I need the README."), text_reply("Done."))
    first, _ = assemble(await collect(model, request(tools=(READ,))))
    earlier = AssistantMessage(content=(*first.content[:1], TextBlock(text="plain turn")))
    history: list[AnyMessage] = [user_text("hi"), earlier, user_text("read it"), first,
                                 tool_text("call_1", "# Title")]
    await collect(model, request(history, tools=(READ,)))
    return model


async def test_reasoning_content_round_trip_for_deepseek_thinking_mode() -> None:
    with FakeOpenAIServer(deepseek_thinking=True) as server:
        model = await _deepseek_round_trip(server, send_reasoning=True)
        await model.aclose()
        sent = server.requests[-1].messages
        assert server.requests[-1].status == 200
        assert sent[3]["reasoning_content"] == "I need the README." and "tool_calls" in sent[3]
        assert "reasoning_content" not in sent[1]  # no tool calls: not sent back
        # a tool-call message recorded without reasoning (another model) still carries the field
        stranger = AssistantMessage(content=(ToolCallBlock(id="x1", name="read", arguments="{}"),))
        assert model.openai_messages([stranger])[0]["reasoning_content"] == ""


async def test_reasoning_content_left_out_fails_on_deepseek_and_is_never_sent_elsewhere() -> None:
    from dsh_notebook.errors import ModelError

    with FakeOpenAIServer(deepseek_thinking=True) as server, pytest.raises(ModelError) as info:
        await _deepseek_round_trip(server, send_reasoning=False)
    assert info.value.code == "BAD_REQUEST" and "reasoning_content" in info.value.message
    with FakeOpenAIServer() as server:  # a plain server refuses the unknown field: we never send it
        model = OpenAICompatAdapter("openai", server.base_url, server.api_key or "")
        server.enqueue(tool_call_reply(CALLS[:1], reasoning="hmm"), text_reply("ok"))
        first, _ = assemble(await collect(model))
        await collect(model, request([user_text("x"), first, tool_text("call_1", "y")]))
        await model.aclose()
        assert [r.status for r in server.requests] == [200, 200]
        assert "reasoning_content" not in server.requests[-1].messages[1]


async def test_an_injected_httpx2_client_carries_the_requests(fake_openai: FakeOpenAIServer) -> None:
    seen: list[str] = []

    async def hook(req: httpx2.Request) -> None:
        seen.append(str(req.url))

    http = httpx2.AsyncClient(event_hooks={"request": [hook]})
    model = OpenAICompatAdapter("openai", fake_openai.base_url, fake_openai.api_key or "", http_client=http)
    fake_openai.enqueue(text_reply("through my client"))
    message, _ = assemble(await collect(model))
    await model.aclose()
    assert message.text == "through my client"
    assert seen == [f"{fake_openai.base_url}/chat/completions"]
