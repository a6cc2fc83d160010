"""The loopback server itself: sync use, strict validation, recording, scripted faults."""

from __future__ import annotations

from typing import Any

import httpx2
import openai
import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply, error_reply, text_reply
from tests.support.fake_openai_checks import check_messages, check_request, check_tools

TOOL = {"type": "function", "function": {"name": "read", "description": "Read.",
                                         "parameters": {"type": "object", "properties": {}}}}
CALL = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}


def test_sync_sdk_client_streams_and_every_request_is_recorded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(text_reply("sync works", pieces=2))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=fake_openai.api_key, max_retries=0)
    stream = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "x"}],
                                            stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    client.close()
    assert text == "sync works"
    assert fake_openai.requests[0].path == "/v1/chat/completions" and fake_openai.requests[0].status == 200


def test_unprefixed_path_and_unknown_paths(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(text_reply("ok", pieces=1))
    body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    headers = {"authorization": f"Bearer {fake_openai.api_key}"}
    root = fake_openai.base_url.removesuffix("/v1")
    with httpx2.Client() as http:
        ok = http.post(f"{root}/chat/completions", json=body, headers=headers)
        missing = http.post(f"{root}/v1/completions", json=body, headers=headers)
        empty = http.post(f"{root}/chat/completions", json=body, headers=headers)
    assert ok.status_code == 200 and b"data: [DONE]" in ok.content and b'"ok"' in ok.content
    assert missing.status_code == 404 and missing.json()["error"]["message"].startswith("Invalid URL")
    assert empty.status_code == 500 and "no scripted reply" in empty.json()["error"]["message"]


def test_server_without_key_accepts_any_auth() -> None:
    with FakeOpenAIServer(api_key=None) as server, httpx2.Client() as http:
        server.enqueue(text_reply("open"))
        got = http.post(f"{server.base_url}/chat/completions",
                        json={"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": "x"}]})
    assert got.status_code == 200 and server.requests[0].headers.get("authorization") is None


def test_error_replies_carry_headers_and_openai_error_bodies(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.enqueue(error_reply(429, "Rate limit reached", headers={"retry-after": "3"}))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=fake_openai.api_key, max_retries=0)
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "x"}])
    client.close()
    assert info.value.response.headers["retry-after"] == "3"
    assert info.value.body == {"message": "Rate limit reached", "type": "rate_limit_exceeded",
                               "param": None, "code": None}


@pytest.mark.parametrize(
    ("tools", "words"),
    [([], "non-empty"), ([{"type": "fn"}], "expected"), ([{**TOOL, "function": {"name": "bad name!"}}], "pattern"),
     ([TOOL, TOOL], "duplicate"),
     ([{"type": "function", "function": {"name": "x", "parameters": {"type": "array"}}}], "type: \"object\"")],
)
def test_tool_schema_shape_is_checked(tools: list[Any], words: str) -> None:
    problem = check_tools(tools)
    assert problem is not None and words in problem


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([], "empty array"),
        ([{"role": "robot", "content": "x"}], "role"),
        ([{"role": "user", "content": None}], "content"),
        ([{"role": "assistant", "content": None, "tool_calls": [CALL]},
          {"role": "tool", "tool_call_id": "c1", "content": "r"}], "content"),
        ([{"role": "assistant", "content": "", "tool_calls": [CALL]}], "did not have response messages: c1"),
        ([{"role": "assistant", "content": "", "tool_calls": [CALL]},
          {"role": "tool", "tool_call_id": "c1", "content": "r"},
          {"role": "tool", "tool_call_id": "c1", "content": "r"}], "Duplicate tool message"),
        ([{"role": "assistant", "content": "", "tool_calls": [CALL, CALL]}], "Duplicate tool_call id"),
        ([{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                              "function": {"name": "r", "arguments": {}}}]}],
         "must be strings"),
        ([{"role": "assistant", "content": "", "tool_calls": []}], "minimum length"),
        ([{"role": "assistant", "content": "", "reasoning_content": "r"}], "reasoning_content"),
        ([{"role": "tool", "content": "r"}], "tool_call_id"),
    ],
)
def test_invalid_messages_are_refused(messages: list[Any], words: str) -> None:
    problem = check_messages(messages)
    assert problem is not None and words in problem


def test_valid_conversations_pass_and_deepseek_requires_reasoning_on_tool_turns() -> None:
    convo: list[dict[str, Any]] = [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "u"}]},
             {"role": "assistant", "content": "", "tool_calls": [CALL]},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}, {"role": "assistant", "content": "done"}]
    assert check_request({"model": "m", "stream": True, "messages": convo, "tools": [TOOL]}) is None
    assert check_request({"messages": convo, "stream_options": {"include_usage": True}}) is not None
    problem = check_messages(convo, deepseek_thinking=True)
    assert problem is not None and "must be passed back" in problem
    convo[2] = {"reasoning_content": "why", **convo[2]}
    assert check_messages(convo, deepseek_thinking=True) is None


def test_reply_pieces_split_bytes_without_losing_any() -> None:
    reply = Reply(chunks=[{"choices": []}], split_every=5)
    assert b"".join(reply.pieces()) == reply.body() and all(len(p) <= 5 for p in reply.pieces())
    assert Reply(raw=b"data: [DONE]\n\n").pieces() == [b"data: [DONE]\n\n"]
