"""The inspector's Stats view shows what ``show --stats`` prints: ``js/src/model/stats-tables.ts``
over the JS trajectory fold gives, character for character, the CLI's text
(:func:`dsh_notebook.analysis.stats_view.format_stats`) — through the real CLI on a log with every
timing and pricing case, and through ``format_stats`` on every recorded real run — and its HTML
tables hold exactly the cells of the CLI's table lines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.analysis.stats_view import format_stats
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import AnyEvent, EventAdapter
from tests.client.parity import ROOT, each_recorded_run, followed_events, js_driver, priced, run_js
from tests.fixtures.record_streams import load
from tests.fixtures.timed_session import timed_session
from tests.support.cli import dsh


@pytest.fixture(scope="module")
def js_tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "stats-tables-main.ts")


def cells_in(line: str, table: dict[str, Any], row: list[str]) -> None:
    """The CLI's line is the row's cells, padded: every cell appears, in order."""
    at = 0
    for cell in row:
        found = line.find(cell, at)
        assert found >= 0, (cell, line)
        at = found + len(cell)


def test_the_stats_view_prints_what_the_cli_prints(js_tables: Path, tmp_path: Path) -> None:
    log = tmp_path / "s_tablespar01.jsonl"
    session = timed_session(log)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = dsh("show", "--stats", str(log), check=True, env=env, cwd=tmp_path).stdout
    js = run_js(js_tables, tmp_path, priced([dump(e) for e in session.events]))
    assert "requests" in cli and "turns" in cli and "RATE_LIMITED" in cli  # the log has what it claims
    assert js["text"] == cli
    lines = cli.splitlines()
    for table in js["tables"]:
        start = lines.index(table["title"])
        cells_in(lines[start + 1], table, table["head"])
        for i, row in enumerate(table["rows"]):
            cells_in(lines[start + 2 + i], table, row)


@each_recorded_run
def test_the_stats_view_equals_format_stats_on_recorded_runs(js_tables: Path, tmp_path: Path, fixture: Path) -> None:
    events = followed_events(load(fixture))
    parsed: list[AnyEvent] = [EventAdapter.validate_python(e) for e in events]
    py = format_stats(session_stats(parsed))
    assert run_js(js_tables, tmp_path, priced(events))["text"] == py
