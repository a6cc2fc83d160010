"""ReplayModel: the assistant messages of a saved log, streamed back turn by turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.errors import LogFormatError, ModelError
from dsh_notebook.models.base import TextDelta, ToolCallDelta, UsageChunk
from dsh_notebook.models.replay import ReplayModel
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    StreamRun,
    ToolResult,
    TurnStart,
    Usage,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import (
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.models.streams import assemble, collect, request

FIRST = AssistantMessage(content=(
    ReasoningBlock(text="Need the file."),
    TextBlock(text="Reading it."),
    ToolCallBlock(id="c1", name="read", arguments='{"file_path": "README.md"}'),
))
SECOND = AssistantMessage(content=(TextBlock(text="The README says hello, world."),))
RUNS = (StreamRun(kind="text", index=0, time0=1000, dt=(40, 60), parts=("The README ", "says hello", ", world.")),)


def events() -> list[object]:
    return [
        TurnStart(seq=0, time=1, turn=1),
        UserMessageEvent(seq=1, time=1, turn=1, message=user_text("read it")),
        AssistantMessageEvent(seq=2, time=2, turn=1, step=1, message=FIRST,
                              usage=Usage(input_tokens=9, output_tokens=3)),
        ToolResult(seq=3, time=3, turn=1, step=1, message=tool_text("c1", "hello, world"),
                   source_event_seqs=(2,)),
        AssistantMessageEvent(seq=4, time=4, turn=1, step=2, message=SECOND, stream=RUNS),
    ]


async def test_replays_each_assistant_message_in_order() -> None:
    model = ReplayModel(events())
    first = await collect(model, request())
    message, reason = assemble(first)
    assert message == FIRST and reason == "tool-calls"
    assert next(c for c in first if isinstance(c, UsageChunk)).usage.input_tokens == 9
    deltas = [c for c in first if isinstance(c, ToolCallDelta)]
    assert "".join(d.arguments_delta for d in deltas) == FIRST.tool_calls[0].arguments
    assert deltas[0].name == "read" and len(deltas) > 1
    second = await collect(model, request())
    assert assemble(second) == (SECOND, "stop")
    assert [c.text for c in second if isinstance(c, TextDelta)] == list(RUNS[0].parts)
    assert model.remaining == 0
    with pytest.raises(ModelError) as info:
        await collect(model, request())
    assert info.value.code == "REPLAY_EXHAUSTED"


def test_recorded_timing_is_replayed_only_when_asked() -> None:
    event = events()[4]
    assert isinstance(event, AssistantMessageEvent)
    timed = ReplayModel([event], timing=True, speed=2.0).chunks(event.message, event.stream, None)
    assert [d for d, c in timed if isinstance(c, TextDelta)] == [0.0, 0.02, 0.03]
    untimed = ReplayModel([event]).chunks(event.message, event.stream, None)
    assert all(d == 0.0 for d, _ in untimed)


def test_stream_runs_that_do_not_rebuild_the_block_are_ignored() -> None:
    bad = (StreamRun(kind="text", index=0, time0=1, parts=("something else",)),)
    chunks = ReplayModel([], pieces=2).chunks(SECOND, bad, None)
    assert "".join(c.text for _, c in chunks if isinstance(c, TextDelta)) == SECOND.text


async def test_reads_a_jsonl_log_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "s_1.jsonl"
    lines = [json.dumps({"type": "session", "version": 1, "id": "s_1", "cwd": "/", "createdAt": 1})]
    lines += [json.dumps(dump(e)) for e in events()]  # type: ignore[arg-type]
    path.write_text("\n".join(lines) + '\n{"seq": 5, "time"')
    model = ReplayModel(path)
    assert len(model.events) == 2
    assert assemble(await collect(model, request()))[0] == FIRST
    path.write_text("\n".join([lines[0], "not json", *lines[1:]]))
    with pytest.raises(LogFormatError):
        ReplayModel(path)
