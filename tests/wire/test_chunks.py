"""One chunk vocabulary: the chunks adapters yield are the wire's chunk shapes, carried by the
``assistant-stream`` frames as they are (no second set of classes, no conversion)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from dsh_notebook.models import base
from dsh_notebook.wire import frames
from dsh_notebook.wire.base import to_json
from dsh_notebook.wire.events import Usage
from dsh_notebook.wire.messages import ToolCallBlock

FRAME = TypeAdapter(frames.AssistantStreamFrame)


def test_the_model_side_names_are_the_wire_classes() -> None:
    assert base.TextDelta is frames.TextDeltaChunk and base.UsageChunk is frames.UsageReport
    assert base.BlockEnd is frames.BlockEndChunk and base.Finish is frames.FinishChunk


@pytest.mark.parametrize(("chunk", "text"), [
    (base.BlockStart(0, "tool-call", id="c1", name="read"),
     '{"type":"block-start","index":0,"blockType":"tool-call","id":"c1","name":"read"}'),
    (base.TextDelta(1, "hi"), '{"type":"text-delta","index":1,"text":"hi"}'),
    (base.ToolCallDelta(0, "c1", '{"a":'), '{"type":"tool-call-delta","index":0,"id":"c1","argumentsDelta":"{\\"a\\":"}'),
    (base.BlockEnd(0, ToolCallBlock(id="c1", name="read", arguments="{}")),
     '{"type":"block-end","index":0,"block":{"type":"tool-call","id":"c1","name":"read","arguments":"{}"}}'),
    (base.UsageChunk(Usage(input_tokens=3, output_tokens=2)),
     '{"type":"usage","usage":{"inputTokens":3,"outputTokens":2}}'),
    (base.Finish("stop", provider_state={"r": 1}), '{"type":"finish","reason":"stop","providerState":{"r":1}}'),
])
def test_a_chunk_frame_carries_the_chunk_as_it_is_and_parses_back(chunk: base.StreamChunk, text: str) -> None:
    frame = frames.StreamChunkFrame.model_construct(attempt_id="a1", index=4, time=7, chunk=chunk)
    line = to_json(frame)
    assert line == f'{{"kind":"chunk","attemptId":"a1","index":4,"time":7,"chunk":{text}}}'
    back = FRAME.validate_json(line)
    assert isinstance(back, frames.StreamChunkFrame) and back.chunk == chunk and type(back.chunk) is type(chunk)


def test_the_wire_rejects_an_unknown_field_or_tag_in_a_chunk() -> None:
    with pytest.raises(ValidationError):
        FRAME.validate_json('{"kind":"chunk","attemptId":"a","index":0,"time":0,'
                            '"chunk":{"type":"text-delta","index":0,"text":"x","extra":1}}')
    with pytest.raises(ValidationError):
        FRAME.validate_json('{"kind":"chunk","attemptId":"a","index":0,"time":0,"chunk":{"type":"nope","index":0}}')
