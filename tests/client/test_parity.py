"""One fold per language: on every recorded real run (``js/test/fixtures/streams``), the Python
``ClientSessionModel`` and the JS one (``js/src/fold.ts``) have the same state after every item,
and that state is the generated ``FoldState`` (``dsh_notebook/wire/fold_state.py``, in the schema and so
in ``wire.gen.ts``): every key, every part's shape, every event as the wire's.

The JS side is bundled with esbuild and run by node (``js/test/parity/main.ts``); both drivers
feed their fold the same client-side facts (prompt calls and their answers, follow and control
items)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.client.parity import (
    FIXTURES,
    each_recorded_run,
    first_difference,
    js_driver,
    replay,
    schema_problems,
)
from tests.fixtures.record_streams import load


@pytest.fixture(scope="module")
def js_fold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "main.ts")


def js_states(bundle: Path, fixture: Path, window: int | None = None) -> list[dict[str, Any]]:
    extra = [str(window)] if window is not None else []
    out = subprocess.run(["node", str(bundle), str(fixture), *extra], check=True, capture_output=True, text=True).stdout
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
    assert schema_problems(python) == [], f"{fixture.name}: the fold's state is not the generated FoldState"


def windowed(lines: list[dict[str, Any]], window: int) -> list[dict[str, Any]]:
    """The transcript as a widget holding a window sees it: its follow's first snapshot carries
    only the last ``window`` events and says where they start (host/follow.py does the same)."""
    out = []
    done = False
    for line in lines:
        msg = line["msg"]
        value = msg.get("value") if msg.get("type") == "item" else None
        if not done and isinstance(value, dict) and value.get("type") == "snapshot" and len(value.get("events") or []) > window:
            events = value["events"][-window:]
            value = {**value, "events": events, "start": events[0]["seq"] - 1}
            line = {**line, "msg": {**msg, "value": value}}
            done = True
        out.append(line)
    return out


@each_recorded_run
def test_the_folds_agree_holding_a_window(js_fold: Path, fixture: Path, tmp_path: Path) -> None:
    """A window of the session (issue 38): a snapshot that starts late, and every later event
    trimmed to the last few — both folds hold the same events and the same state throughout."""
    lines = load(fixture)
    window = 5
    given = windowed(lines, window)  # (a run whose snapshots are short is windowed by the trim alone)
    path = tmp_path / fixture.name
    path.write_text("".join(json.dumps(x) + "\n" for x in given))
    python = replay(given, window)
    js = js_states(js_fold, path, window)
    assert [i for i, _ in python] == [s["line"] for s in js]
    for (i, state), other in zip(python, js, strict=True):
        assert state == other["state"], f"line {i + 1} of {fixture.name}: {first_difference(state, other['state'])}"
    final = python[-1][1]
    assert len(final["events"]) <= window and final["start"] == final["cursor"] - len(final["events"])
    assert final["turnEnds"] and not final["gap"]
    assert schema_problems(python) == [], f"{fixture.name}: the fold's state is not the generated FoldState"


def test_the_shape_check_sees_a_state_off_the_generated_shape() -> None:
    """``schema_problems`` is not a check that cannot fail: a key too many or missing, a value of
    another type, a part off its shape or an event off the wire's each give a problem."""
    steps = replay(load(min(FIXTURES, key=lambda f: f.stat().st_size)))
    i, state = next((i, s) for i, s in steps if s["tools"] and s["events"])
    assert schema_problems([(i, state)]) == []
    tool = next(iter(state["tools"].values()))
    event = state["events"][-1]
    broken = [
        {**state, "turnEndings": []},
        {k: v for k, v in state.items() if k != "gap"},
        {**state, "cursor": str(state["cursor"])},
        {**state, "status": "thinking"},
        {**state, "tools": {"c": {**tool, "phases": [{"phase": "execute", "status": "maybe", "detail": None, "time": None}]}}},
        {**state, "inbox": {**state["inbox"], "later": []}},
        {**state, "events": [*state["events"][:-1], {**event, "colour": "red"}]},
    ]
    for n, bad in enumerate(broken):
        assert schema_problems([(i, bad)]), f"variant {n} passed the shape check"
