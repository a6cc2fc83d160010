"""The trajectory figures in the browser equal the Python ones: ``js/src/model/trajectory.ts``
(what the loop widget's header and the inspector's waterfall show) against
:func:`dsh_notebook.analysis.stats.session_stats` (``show --stats --json``), on every recorded real
run (``js/test/fixtures/streams``) and on a log with every timing and pricing case (first byte,
reasoning and content deltas, cached input, a dated snapshot, a bare OpenAI-compatible name, an
unknown model, a recorded context window, an approval wait, a late ``finishedTime``, an error
attempt), built through the real Session. The price table is the one the widgets get
(:func:`dsh_notebook.models.price_table.pricing_table`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import AnyEvent, EventAdapter
from tests.client.parity import (
    each_recorded_run,
    first_difference,
    followed_events,
    js_driver,
    priced,
    run_js,
)
from tests.fixtures.record_streams import load
from tests.fixtures.timed_session import timed_session


@pytest.fixture(scope="module")
def js_stats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "stats-main.ts")


def python_stats(events: list[dict[str, Any]], override: int | None = None) -> dict[str, Any]:
    parsed: list[AnyEvent] = [EventAdapter.validate_python(e) for e in events]
    result: dict[str, Any] = json.loads(json.dumps(session_stats(parsed, context_window_override=override).to_json_dict()))
    return result


@each_recorded_run
def test_js_figures_equal_python_on_recorded_runs(js_stats: Path, tmp_path: Path, fixture: Path) -> None:
    events = followed_events(load(fixture))
    assert any(e["type"] == "request/frozen" for e in events), fixture.name
    py, js = python_stats(events), run_js(js_stats, tmp_path, priced(events))
    assert py["totals"]["requests"] > 0 and py["totals"]["outputTokens"] > 0
    assert js == py, first_difference(py, js)


@pytest.mark.parametrize("override", [None, 32_000])
def test_js_figures_equal_python_on_every_timing_and_pricing_case(js_stats: Path, tmp_path: Path, override: int | None) -> None:
    events = [dump(e) for e in timed_session().events]
    py, js = python_stats(events, override), run_js(js_stats, tmp_path, priced(events, override))
    # the log exercises what it claims: priced and unpriced models, TTFT, approval waits, an error
    # (the failed attempt has no usage, so no cost either)
    assert [r["costUsd"] is None for r in py["requests"]] == [False, False, True] + [False] * 4 + [True, True]
    assert py["totals"]["costUsd"] is None and py["turns"][0]["costUsd"] > 0
    assert all(r["ttftMs"] == 300 for r in py["requests"] if r["outcome"] == "completed" and r["step"] == 1)
    assert [t["approvalWaitMs"] for t in py["tools"]] == [None, 1500, None, 1500]
    assert py["requests"][2]["outcome"] == "error" and py["requests"][2]["error"] == "RATE_LIMITED"
    assert py["requests"][3]["contextWindow"] == (override or 64_000)
    assert py["requests"][5]["contextWindow"] == (override or 128_000)  # a bare name: DeepSeek's window
    assert js == py, first_difference(py, js)
