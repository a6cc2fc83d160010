"""Tool calls from schema-constrained output (``local:`` models whose template has no tool calling):
the request asked, the history rewritten, the answer turned back into ordinary chunks."""

from __future__ import annotations

import json
from typing import Any

from dsh_notebook.models.base import BlockEnd, BlockStart, Finish, TextDelta, UsageChunk
from dsh_notebook.models.schema_tools import (
    SchemaAnswer,
    answer_schema,
    rewrite_messages,
    schema_params,
)
from dsh_notebook.wire.events import ToolSchema, Usage
from dsh_notebook.wire.messages import TextBlock, ToolCallBlock

READ = ToolSchema(name="read", description="Read a file\nmore", parameters={
    "type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]})


def test_the_request_asks_for_one_of_the_tools_or_a_text_answer_and_offers_no_tools() -> None:
    params = {"model": "m", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
              "tools": [{"type": "function"}], "tool_choice": "auto", "max_tokens": 9}
    out = schema_params(params, (READ,))
    assert "tools" not in out and "tool_choice" not in out and out["max_tokens"] == 9
    schema = out["response_format"]["json_schema"]["schema"]
    assert schema == answer_schema((READ,))
    shapes = schema["oneOf"]
    assert shapes[0]["required"] == ["content"]
    assert shapes[1]["properties"] == {"name": {"const": "read"}, "arguments": READ.parameters}
    assert out["messages"][0]["role"] == "system" and "be brief" in out["messages"][0]["content"]
    assert "- read: Read a file" in out["messages"][0]["content"]
    assert out["messages"][-1] == {"role": "user", "content": "hi"}


def test_tool_choice_required_or_named_leaves_no_text_answer_in_the_grammar() -> None:
    grep = ToolSchema(name="grep", description="Search", parameters={"type": "object"})
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    def shapes(choice: object) -> list[dict[str, Any]]:
        out = schema_params({**base, "tool_choice": choice}, (READ, grep))
        assert "tool_choice" not in out
        return list(out["response_format"]["json_schema"]["schema"]["oneOf"])
    assert [s["required"] for s in shapes("auto")] == [["content"], ["name", "arguments"], ["name", "arguments"]]
    assert [s["properties"]["name"] for s in shapes("required")] == [{"const": "read"}, {"const": "grep"}]
    named = shapes({"type": "function", "function": {"name": "grep"}})
    assert [s["properties"]["name"] for s in named] == [{"const": "grep"}]


def test_the_history_speaks_the_same_json_and_knows_no_tool_role() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"file_path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "hello"},
    ]
    out = rewrite_messages(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert json.loads(out[1]["content"]) == {"name": "read", "arguments": {"file_path": "a"}}
    assert out[2]["content"] == "Result of read (call c1):\nhello"


def _answer(text: str, reason: str = "stop") -> list[object]:
    answer = SchemaAnswer(["read"])
    held = [*answer.feed(TextDelta(0, text[:5])), *answer.feed(TextDelta(0, text[5:])),
            *answer.feed(UsageChunk(Usage(input_tokens=3, output_tokens=4)))]
    if '"content"' not in text:
        assert [type(c) for c in held] == [UsageChunk]  # a call is held until the JSON is whole
    return [*held, *answer.finish(reason)]  # type: ignore[arg-type]


def test_a_text_answer_streams_its_words_as_they_come_and_a_cut_one_keeps_them() -> None:
    answer = SchemaAnswer(["read"])
    raw = '{"content": "Caf\\u00e9 \\ud83d\\ude00 said \\"hi\\"\\nbye"}'
    out: list[object] = []
    for i in range(len(raw)):  # one character at a time: escapes arrive split
        out += answer.feed(TextDelta(0, raw[i]))
        if i == 20:
            assert any(isinstance(c, TextDelta) for c in out)  # words before the JSON is whole
    out += answer.finish("stop")
    text = "".join(c.text for c in out if isinstance(c, TextDelta))
    assert text == json.loads(raw)["content"]
    assert [c.block for c in out if isinstance(c, BlockEnd)] == [TextBlock(text=text)]
    assert isinstance(out[0], BlockStart) and out[-1] == Finish("stop")
    cut = _answer('{"content": "Hello, wor', "max-tokens")
    assert [c.block for c in cut if isinstance(c, BlockEnd)] == [TextBlock(text="Hello, wor")]
    assert cut[-1] == Finish("max-tokens")


def test_a_call_becomes_an_ordinary_tool_call() -> None:
    chunks = _answer('{"name": "read", "arguments": {"file_path": "README.md"}}')
    end = [c for c in chunks if isinstance(c, BlockEnd)][0]
    assert isinstance(end.block, ToolCallBlock) and end.block.name == "read"
    assert json.loads(end.block.arguments) == {"file_path": "README.md"}
    assert chunks[-1] == Finish("tool-calls")


def test_a_text_answer_a_cut_answer_and_an_unknown_tool_stay_text() -> None:
    chunks = _answer('{"content": "Hello there"}')
    assert [c.block for c in chunks if isinstance(c, BlockEnd)] == [TextBlock(text="Hello there")]
    assert chunks[-1] == Finish("stop")
    cut = _answer('{"name": "read", "argu', "max-tokens")
    assert cut[-1] == Finish("max-tokens") and not any(isinstance(c, BlockEnd) and isinstance(c.block, ToolCallBlock)
                                                       for c in cut)
    whole = _answer('{"name": "read", "arguments": {"file_path": "a"}}\n\n  \n', "max-tokens")
    assert whole[-1] == Finish("tool-calls")  # cut in the trailing whitespace the grammar allows: a whole call
    unknown = _answer('{"name": "rm", "arguments": {}}')
    assert unknown[-1] == Finish("stop")
