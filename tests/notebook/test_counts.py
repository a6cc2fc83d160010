"""One definition of "N events" (the last seq + 1) in the cell's summary line, ``%dsh sessions``,
``%dsh show`` and ``python -m dsh_notebook sessions`` — on a real two-turn session."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.cell.result import TurnResult
from dsh_notebook.notebook.magic.views import SessionTable
from dsh_notebook.session.inspect import sessions_main, show_main


def logged_events(path: str) -> int:
    lines = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    assert lines[0]["type"] == "session"  # the header line is not an event
    return len(lines) - 1


def test_every_view_counts_the_same_events(shell: Any, isolated_dsh_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = shell.run_cell("%dsh read README.md and summarise").result
    second = shell.run_cell("%dsh read README.md again").result
    assert isinstance(first, TurnResult) and isinstance(second, TurnResult)
    counts = [int(m.group(1)) for r in (first, second) if (m := re.search(r"· (\d+) events in the session", r.summary()))]
    assert len(counts) == 2 and counts[0] < counts[1]
    # the first turn's line counts the prompt's queueing before turn/start too: the session so far
    assert counts[0] == first.events[-1].seq + 1 and first.events[0].seq > 0

    table = shell.run_cell("%dsh sessions").result
    assert isinstance(table, SessionTable) and table.headers[3] == "events"
    assert table.rows[0][3] == str(counts[1])
    listing = repr(shell.run_cell("%dsh show --no-widget").result)
    assert f"({counts[1]} events)" in listing
    path = next(iter(isolated_dsh_home.glob("sessions/*.jsonl")))
    assert logged_events(str(path)) == counts[1]
    capsys.readouterr()
    assert sessions_main(argparse.Namespace()) == 0
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[0] == second.session_id and row[5] == str(counts[1])  # ID STATUS TURNS DATE TIME EVENTS
    assert show_main(argparse.Namespace(target=str(path))) == 0
    assert f"  {counts[1]} events  " in capsys.readouterr().out.splitlines()[0]
