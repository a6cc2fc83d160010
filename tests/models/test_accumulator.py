"""ChunkAccumulator: OpenAI chat-completion chunks → normalized stream chunks, quirk by quirk."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionChunk

from dsh_notebook.errors import ModelError
from dsh_notebook.models.accumulator import ChunkAccumulator, StreamCutError, usage_from_openai
from dsh_notebook.models.base import (
    BlockEnd,
    BlockStart,
    Finish,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)
from dsh_notebook.wire.messages import ReasoningBlock, TextBlock, ToolCallBlock
from tests.models.streams import assemble
from tests.support.fake_openai import chunk, reasoning_chunks, text_chunks, tool_call_chunks

CALLS = [("call_a", "read", '{"file_path": "notes/é.md"}'), ("call_b", "glob", '{"pattern": "**/*.py"}')]


def run(chunks: list[Any]) -> list[StreamChunk]:
    acc = ChunkAccumulator()
    out = [c for raw in chunks for c in acc.feed(raw)]
    return out + acc.finish()


def test_text_stream_yields_start_deltas_end_usage_finish() -> None:
    out = run(text_chunks("Hello, world", pieces=3))
    assert out[0] == BlockStart(0, "text")
    assert [c.text for c in out if isinstance(c, TextDelta)] == ["Hell", "o, w", "orld"]
    message, reason = assemble(out)
    assert message.content == (TextBlock(text="Hello, world"),) and reason == "stop"
    usage = next(c for c in out if isinstance(c, UsageChunk)).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (10, 5, 2)
    assert [type(c) for c in out[-3:]] == [BlockEnd, UsageChunk, Finish]


@pytest.mark.parametrize(
    "quirks",
    [(), ("repeat-ids",), ("index-zero",), ("index-zero", "repeat-ids"), ("no-index",),
     ("finish-stop",), ("no-finish",), ("index-zero", "finish-stop", "no-finish")],
)
def test_tool_calls_survive_every_quirk(quirks: tuple[str, ...]) -> None:
    out = run(tool_call_chunks(CALLS, text="Let me look.", quirks=quirks))
    message, reason = assemble(out)
    assert reason == "tool-calls"
    assert message.content == (
        TextBlock(text="Let me look."),
        ToolCallBlock(id="call_a", name="read", arguments=CALLS[0][2]),
        ToolCallBlock(id="call_b", name="glob", arguments=CALLS[1][2]),
    )
    starts = [c for c in out if isinstance(c, BlockStart)]
    assert [(s.index, s.block_type, s.id, s.name) for s in starts] == [
        (0, "text", None, None), (1, "tool-call", "call_a", "read"), (2, "tool-call", "call_b", "glob")
    ]
    assert all(d.name is None for d in out if isinstance(d, ToolCallDelta))


def test_repeated_names_are_not_appended_and_ids_are_kept() -> None:
    out = run(tool_call_chunks(CALLS[:1], quirks=("repeat-ids",), pieces=5))
    (call,) = assemble(out)[0].tool_calls
    assert call.name == "read" and call.id == "call_a"
    deltas = [c for c in out if isinstance(c, ToolCallDelta)]
    assert len(deltas) == 5 and {d.id for d in deltas} == {"call_a"}


def test_provider_indexes_are_replaced_by_dense_indexes_in_order_of_appearance() -> None:
    raw = [chunk({"tool_calls": [{"index": 7, "id": "x", "type": "function",
                                  "function": {"name": "read", "arguments": "{}"}}]}),
           chunk({"tool_calls": [{"index": 3, "id": "y", "type": "function",
                                  "function": {"name": "glob", "arguments": "{}"}}]}),
           chunk({}, finish="tool_calls")]
    out = run(raw)
    assert [(c.index, c.block.id) for c in out if isinstance(c, BlockEnd)] == [(0, "x"), (1, "y")]  # type: ignore[union-attr]


def test_name_arriving_after_the_id_is_reported_once() -> None:
    raw = [chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"arguments": ""}}]}),
           chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": "{}"}}]}),
           chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": ""}}]})]
    out = run(raw)
    assert [d.name for d in out if isinstance(d, ToolCallDelta)] == ["read"]
    assert assemble(out)[0].tool_calls[0].name == "read"


def test_a_call_without_any_id_gets_a_synthetic_one() -> None:
    raw = [chunk({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": "{}"}}]})]
    (call,) = assemble(run(raw))[0].tool_calls
    assert call.id == "call_0" and call.arguments == "{}"


def test_max_tokens_drops_tool_call_blocks_but_keeps_text() -> None:
    out = run(tool_call_chunks(CALLS, text="partial", finish="length"))
    message, reason = assemble(out)
    assert reason == "max-tokens"
    assert message.content == (TextBlock(text="partial"),)


def test_reasoning_content_and_reasoning_fields_become_reasoning_blocks() -> None:
    for field_name in ("reasoning_content", "reasoning"):
        out = run(reasoning_chunks("I should greet.", "Hi!", field_name=field_name))
        assert [type(c) for c in out[:2]] == [BlockStart, ReasoningDelta]
        message, _ = assemble(out)
        assert message.content == (ReasoningBlock(text="I should greet."), TextBlock(text="Hi!"))


def test_interleaved_reasoning_and_text_open_new_blocks() -> None:
    raw = [chunk({"reasoning_content": "a"}), chunk({"content": "b"}), chunk({"reasoning_content": "c"}),
           chunk({}, finish="stop")]
    assert [type(b).__name__ for b in assemble(run(raw))[0].content] == [
        "ReasoningBlock", "TextBlock", "ReasoningBlock"]


def test_usage_in_a_final_chunk_with_empty_choices_and_deepseek_fields() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 40, "prompt_cache_hit_tokens": 60,
             "prompt_cache_miss_tokens": 40, "completion_tokens_details": {"reasoning_tokens": 30}}
    out = run([chunk({"content": "x"}), chunk({}, finish="stop"), {"choices": [], "usage": usage}])
    got = next(c for c in out if isinstance(c, UsageChunk)).usage
    assert (got.input_tokens, got.output_tokens, got.cache_read_tokens, got.reasoning_tokens) == (40, 40, 60, 30)
    assert usage_from_openai({}).input_tokens == 0


def test_other_choices_are_ignored() -> None:
    out = run([chunk({"content": "zero"}), chunk({"content": "one"}, index=1), chunk({}, finish="stop")])
    assert assemble(out)[0].text == "zero"


def test_sdk_objects_are_accepted_like_dicts() -> None:
    raw = [{"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", **c}
           for c in reasoning_chunks("think", "") + tool_call_chunks(CALLS, quirks=("index-zero",))]
    objects = [ChatCompletionChunk.model_validate(c) for c in raw]
    assert assemble(run(objects)) == assemble(run(raw))
    assert assemble(run(objects))[0].content[0] == ReasoningBlock(text="think")


@pytest.mark.parametrize("raw", [[], [chunk(usage={"prompt_tokens": 1, "completion_tokens": 0})],
                                 [chunk({"role": "assistant", "content": ""})]])
def test_nothing_received_is_a_retryable_empty_response(raw: list[dict[str, Any]]) -> None:
    with pytest.raises(ModelError) as info:
        run(raw)
    assert info.value.code == "EMPTY_RESPONSE" and info.value.retryable


def test_a_finish_without_content_is_an_empty_reply_not_an_error() -> None:
    message, reason = assemble(run([chunk({}, finish="stop")]))
    assert message.content == () and reason == "stop"


def test_insufficient_system_resource_is_a_retryable_server_error() -> None:
    with pytest.raises(ModelError) as info:
        run([chunk({"content": "x"}), chunk({}, finish="insufficient_system_resource")])
    assert info.value.code == "SERVER_ERROR" and info.value.retryable


def test_cut_error_reports_completed_calls_and_partial_text() -> None:
    acc = ChunkAccumulator()
    for raw in text_chunks("Reading", usage=None, finish=None):
        acc.feed(raw)
    early = acc.cut_error("lost")
    assert isinstance(early, StreamCutError) and early.retryable and early.code == "STREAM_CUT"
    assert early.partial_blocks == (TextBlock(text="Reading"),)
    for raw in tool_call_chunks(CALLS, finish=None, usage=None)[1:]:
        acc.feed(raw)
    late = acc.cut_error("lost")
    assert late.completed_tool_calls == ("call_a",) and not late.retryable


@given(st.text(min_size=1, max_size=40), st.lists(st.integers(0, 40), max_size=8),
       st.sampled_from(["", "repeat-ids", "index-zero"]))
def test_arguments_split_anywhere_reassemble_exactly(text: str, cuts: list[int], quirk: str) -> None:
    import json

    arguments = json.dumps({"value": text}, ensure_ascii=False)
    edges = [0, *sorted({c for c in cuts if 0 < c < len(arguments)}), len(arguments)]
    raw = []
    for n, (a, b) in enumerate(zip(edges, edges[1:], strict=False)):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": arguments[a:b]}}
        if n == 0 or quirk == "repeat-ids":
            call.update(id="c1", type="function")
            call["function"]["name"] = "write"
        raw.append(chunk({"tool_calls": [call], "content": text[a:b] or None}))
    message, reason = assemble(run(raw))
    assert message.tool_calls[0].arguments == arguments and reason == "tool-calls"
    assert message.text == text
