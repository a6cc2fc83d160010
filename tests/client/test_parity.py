"""One fold per language: on every recorded real run (``js/test/fixtures/streams``), the Python
``ClientSessionModel`` and the JS one (``js/src/fold.ts``) have the same state after every item.

The JS side is bundled with esbuild and run by node (``js/test/parity/main.ts``); both drivers
feed their fold the same client-side facts (prompt calls and their answers, follow and control
items)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.client.parity import FIXTURES, each_recorded_run, first_difference, js_driver, replay
from tests.fixtures.record_streams import load


@pytest.fixture(scope="module")
def js_fold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "main.ts")


def js_states(bundle: Path, fixture: Path) -> list[dict[str, Any]]:
    out = subprocess.run(["node", str(bundle), str(fixture)], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_fixtures_exist() -> None:
    assert len(FIXTURES) >= 7


@each_recorded_run
def test_python_and_js_folds_agree_after_every_item(js_fold: Path, fixture: Path) -> None:
    lines = load(fixture)
    python = replay(lines)
    js = js_states(js_fold, fixture)
    assert [i for i, _ in python] == [s["line"] for s in js]
    assert len(python) > 50
    for (i, state), other in zip(python, js, strict=True):
        assert state == other["state"], f"line {i + 1} of {fixture.name}: {first_difference(state, other['state'])}"
    final = python[-1][1]
    assert final["turnEnds"] and not final["gap"] and final["attempt"] is None
