"""The trajectory figures in the browser equal the Python ones: ``js/src/model/trajectory.ts``
(what the loop widget's header and the inspector's waterfall show) against
:func:`dsh_notebook.session.stats.session_stats` (``show --stats --json``), on every recorded real
run (``js/test/fixtures/streams``) and on a log with every timing and pricing case (first byte,
reasoning and content deltas, cached input, a dated snapshot, a bare OpenAI-compatible name, an
unknown model, a recorded context window, an approval wait, a late ``finishedTime``, an error
attempt), built through the real Session. The price table is the one the widgets get
(:func:`dsh_notebook.models.price_table.pricing_table`)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.models.price_table import pricing_table
from dsh_notebook.session.stats import session_stats
from dsh_notebook.wire.events import AnyEvent, EventAdapter, event_to_dict
from tests.client.test_parity import first_difference
from tests.fixtures.record_streams import OUT, load
from tests.fixtures.timed_session import timed_session

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
FIXTURES = sorted(OUT.glob("*.jsonl"))


@pytest.fixture(scope="module")
def js_stats(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = shutil.which("node")
    esbuild = JS / "node_modules" / "esbuild" / "bin" / "esbuild"
    assert node and esbuild.exists(), "the parity test needs node and js/node_modules (make setup)"
    bundle = tmp_path_factory.mktemp("stats") / "stats.mjs"
    subprocess.run([str(esbuild), str(JS / "test" / "parity" / "stats-main.ts"), "--bundle", "--platform=node",
                    "--format=esm", f"--outfile={bundle}", "--log-level=warning"], check=True, cwd=JS)
    return bundle


def run_js(bundle: Path, tmp: Path, events: list[dict[str, Any]], override: int | None = None) -> dict[str, Any]:
    src = tmp / "input.json"
    src.write_text(json.dumps({"events": events, "pricing": pricing_table(), "override": override}))
    out = subprocess.run(["node", str(bundle), str(src)], check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def followed_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events a widget's fold holds at the end of a recorded run (snapshot + event items)."""
    follows = {m["msg"]["streamId"] for m in lines if m["dir"] == "out" and m["msg"]["type"] == "open"
               and m["msg"]["endpoint"] == "session/follow"}
    by_seq: dict[int, dict[str, Any]] = {}
    for m in lines:
        msg = m["msg"]
        if m["dir"] != "in" or msg["type"] != "item" or msg["streamId"] not in follows:
            continue
        value = msg["value"]
        for ev in value.get("events") or [] if value["type"] == "snapshot" else [value["event"]] if value["type"] == "event" else []:
            by_seq[ev["seq"]] = ev
    return [by_seq[s] for s in sorted(by_seq)]


def python_stats(events: list[dict[str, Any]], override: int | None = None) -> dict[str, Any]:
    parsed: list[AnyEvent] = [EventAdapter.validate_python(e) for e in events]
    result: dict[str, Any] = json.loads(json.dumps(session_stats(parsed, context_window_override=override).to_json_dict()))
    return result


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_js_figures_equal_python_on_recorded_runs(js_stats: Path, tmp_path: Path, fixture: Path) -> None:
    events = followed_events(load(fixture))
    assert any(e["type"] == "request/frozen" for e in events), fixture.name
    py, js = python_stats(events), run_js(js_stats, tmp_path, events)
    assert py["totals"]["requests"] > 0 and py["totals"]["outputTokens"] > 0
    assert js == py, first_difference(py, js)


@pytest.mark.parametrize("override", [None, 32_000])
def test_js_figures_equal_python_on_every_timing_and_pricing_case(js_stats: Path, tmp_path: Path, override: int | None) -> None:
    events = [event_to_dict(e) for e in timed_session().events]
    py, js = python_stats(events, override), run_js(js_stats, tmp_path, events, override)
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
