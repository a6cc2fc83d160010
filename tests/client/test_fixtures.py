"""The recorded stream fixtures (``js/test/fixtures/streams``) are reproducible in shape: every
scenario is recorded again from a real run and must match the committed file line by line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from dsh_notebook.wire.envelopes import ClientMessageAdapter, ServerMessageAdapter
from tests.fixtures.record_streams import OUT, SCENARIOS, load, record, shape


def test_every_scenario_has_a_committed_fixture() -> None:
    assert sorted(p.stem for p in OUT.glob("*.jsonl")) == sorted(SCENARIOS)


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_committed_fixture_matches_a_fresh_recording(name: str, tmp_path: Path) -> None:
    committed = shape(load(OUT / f"{name}.jsonl"))
    fresh = shape(record(name))
    assert fresh == committed, f"{name}: regenerate with `python tests/fixtures/record_streams.py`"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_recorded_line_is_a_wire_message(name: str) -> None:
    """The fixtures are what the typed wire says: each line parses as a ClientMessage (sent) or a
    ServerMessage (received), items included; payloads are closed, so a stray field would fail."""
    lines = load(OUT / f"{name}.jsonl")
    for line in lines:
        adapter = ClientMessageAdapter if line["dir"] == "out" else ServerMessageAdapter
        adapter.validate_python(line["msg"])
    item = next(line["msg"] for line in lines if line["msg"].get("type") == "item")
    with pytest.raises(ValidationError):
        ServerMessageAdapter.validate_python({**item, "value": {**item["value"], "extra": 1}})
