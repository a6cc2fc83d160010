"""The debugger's ``paused`` item is typed per stage: a payload that is not its stage's is refused,
and every stage's item goes over the wire and back as the same shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from dsh_notebook.wire.base import to_json
from dsh_notebook.wire.follow import FollowItemAdapter
from dsh_notebook.wire.messages import user_text
from dsh_notebook.wire.pause import (
    CallPayload,
    HistoryPayload,
    PausedCall,
    PausedHistory,
    PausedRequest,
    PausedResult,
    RequestPayload,
    ResultPayload,
    paused_item,
)

CALL = CallPayload(call_id="c1", name="bash", arguments='{"command":"ls"}', seq=None)
RESULT = ResultPayload(call_id="c1", name="bash", seq=4, result="ok", is_error=False, code=None)
HISTORY = HistoryPayload(message_seqs=(1,), messages=(user_text("hi"),))
REQUEST = RequestPayload(seq=5, provider="fake", model="m", messages=(user_text("hi"),), tools=("bash",))


@pytest.mark.parametrize(("stage", "payload", "cls"), [
    ("02", CALL, PausedCall), ("03", CALL, PausedCall), ("04", RESULT, PausedResult),
    ("05", HISTORY, PausedHistory), ("06", REQUEST, PausedRequest),
])
def test_each_stage_round_trips_as_its_own_shape(stage: str, payload: object, cls: type) -> None:
    item = paused_item(stage, payload, call_id="c1")  # type: ignore[arg-type]
    back = FollowItemAdapter.validate_json(to_json(item))
    assert type(back) is cls and back == item


def test_nullable_payload_fields_are_sent_as_null() -> None:
    wire = to_json(paused_item("04", RESULT))
    assert '"code":null' in wire and '"isError":false' in wire
    assert '"seq":null' in to_json(paused_item("03", CALL))


@pytest.mark.parametrize(("stage", "payload"), [("04", CALL), ("06", HISTORY), ("02", {"arguments": "{}"})])
def test_a_payload_of_another_stage_is_refused(stage: str, payload: object) -> None:
    line = to_json(paused_item("03", CALL)).replace('"stage":"03"', f'"stage":"{stage}"')
    if isinstance(payload, dict):
        line = re.sub(r'"payload":\{.*\}', '"payload":{"arguments":"{}"}', line)
    elif payload is HISTORY:
        line = re.sub(r'"payload":\{.*\}', '"payload":' + to_json(HISTORY), line)
    with pytest.raises(ValidationError):
        FollowItemAdapter.validate_json(line)


def test_no_type_routing_on_dicts_outside_the_wire() -> None:
    """Raw wire data routes through ``wire.base.tag`` or the wire's adapters; a ``"type"`` read
    outside ``wire/`` says on its line why it is not wire routing."""
    root = Path(__file__).resolve().parents[2] / "dsh_notebook"
    pattern = re.compile(r"""\[["']type["']\]|\.get\(["']type["']""")
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] == "wire" or path.name.startswith("openai_"):
            continue  # the wire's own parsers; the OpenAI API's request shapes (testing/openai_*)
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and "not routing" not in line and "not wire routing" not in line \
                    and "envelope parser" not in line:
                found.append(f"{path.relative_to(root)}:{no}: {line.strip()}")
    assert found == []
