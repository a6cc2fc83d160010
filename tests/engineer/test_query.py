"""The query language of ``show --search`` / ``sessions --search`` / the inspector, over a real log."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from dsh_notebook.observe.query_view import load_events
from dsh_notebook.pages.query import QueryError, marked, parse_query, search_events

from .conftest import cli


def seqs(log: Path, query: str) -> list[int]:
    return [int(h.event["seq"]) for h in search_events(load_events(log), parse_query(query))]


def test_field_terms_narrow_to_the_failing_bash_result(fixed_session: tuple[Path, Path]) -> None:
    _, log = fixed_session
    events = {e["seq"]: e for e in load_events(log)}
    failing = seqs(log, "type:tool/result exit:1")
    assert len(failing) == 1 and events[failing[0]]["meta"]["exitCode"] == 1
    assert seqs(log, "type:tool/result name:bash exit:1 turn:1") == failing
    assert seqs(log, "type:tool/result exit:1 turn:2") == []
    passing = seqs(log, "name:bash exit:!1")
    assert passing and failing[0] not in passing
    calls = seqs(log, "type:tool/call name:bash")
    assert calls and all(events[s]["name"] == "bash" for s in calls)
    # type:tool is every tool/… event; a seq range bounds them
    tools = seqs(log, "type:tool")
    assert set(calls) < set(tools) and {events[s]["type"] for s in tools} >= {"tool/call", "tool/result"}
    assert all(10 <= s <= 20 for s in seqs(log, "type:tool seq:10..20"))


def test_free_text_and_phrases_with_marked_snippets(fixed_session: tuple[Path, Path]) -> None:
    _, log = fixed_session
    hits = search_events(load_events(log), parse_query('name:bash "tests failed"'))
    assert len(hits) == 1 and hits[0].exit == 1
    assert "[tests failed]" in marked(hits[0].snippet, hits[0].marks)
    assert seqs(log, '"tests failed" "all 6"') == []  # every term must match
    assert seqs(log, "http://nowhere") == []  # an unknown prefix is text, not a field


@pytest.mark.parametrize("bad", ["turn:x", "exit:one", "seq:a..b"])
def test_a_bad_field_value_is_a_coded_error(bad: str) -> None:
    with pytest.raises(QueryError) as err:
        parse_query(bad)
    assert err.value.code == "BAD_QUERY"


def test_show_search_prints_and_exports(fixed_session: tuple[Path, Path]) -> None:
    home, log = fixed_session
    out = cli(home, "show", str(log), "--search", "type:tool/result exit:1 failed")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1 event match") and "[failed]" in out.stdout
    lines = cli(home, "show", str(log), "--search", "name:bash", "--export", "jsonl").stdout.splitlines()
    assert [json.loads(x)["seq"] for x in lines] == seqs(log, "name:bash")
    rows = list(csv.DictReader(io.StringIO(cli(home, "show", str(log), "--search", "exit:1", "--export", "csv").stdout)))
    assert [(r["type"], r["name"], r["exit"]) for r in rows] == [("tool/result", "bash", "1")]
    # the time in ISO 8601 UTC (issue 38 item 6), the event's own epoch ms read back exactly
    (ev,) = [e for e in load_events(log) if e["seq"] == int(rows[0]["seq"])]
    assert rows[0]["time"].endswith("Z") and "T" in rows[0]["time"], rows[0]["time"]
    at = datetime.fromisoformat(rows[0]["time"].replace("Z", "+00:00"))
    assert round(at.timestamp() * 1000) == ev["time"] and at.tzinfo is not None and at.utcoffset() == timedelta(0)
    bad = cli(home, "show", str(log), "--search", "turn:x")
    assert bad.returncode == 2 and "BAD_QUERY" in bad.stderr


def test_sessions_search_takes_field_terms(fixed_session: tuple[Path, Path]) -> None:
    home, log = fixed_session
    out = cli(home, "sessions", "--search", "type:tool/result exit:1", "--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)["sessions"]
    assert [m["seq"] for s in found for m in s["matches"]] == seqs(log, "type:tool/result exit:1")
    assert json.loads(cli(home, "sessions", "--search", "exit:7", "--json").stdout)["sessions"] == []
