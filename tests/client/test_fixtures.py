"""The recorded stream fixtures (``js/test/fixtures/streams``) are reproducible in shape: every
scenario is recorded again from a real run and must match the committed file line by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.record_streams import OUT, SCENARIOS, load, record, shape


def test_every_scenario_has_a_committed_fixture() -> None:
    assert sorted(p.stem for p in OUT.glob("*.jsonl")) == sorted(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_committed_fixture_matches_a_fresh_recording(name: str, tmp_path: Path) -> None:
    committed = shape(load(OUT / f"{name}.jsonl"))
    fresh = shape(record(name))
    assert fresh == committed, f"{name}: regenerate with `python tests/fixtures/record_streams.py`"
