"""The pages of a session computed in the browser equal the kernel's (issue 38 item 1): while a
widget's window holds the whole session its panels read ``js/src/data/local.ts``, once it holds
less they read ``session/page`` (``dsh_notebook/pages/``) — the same rows, filters and
search, facets, stats tables, timeline, turns, request diffs, derived messages and exports, on
every recorded real run. Both sides' pages are read through the wire's ``Page`` model (what
``session/page`` sends), so a field one side leaves out and the other sends as its default compare
equal, and nothing else does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.pages.indexed import SessionPages
from dsh_notebook.pages.requests import messages_page, request_diff_page
from dsh_notebook.pages.rows import export_page, facets_page, rows_page
from dsh_notebook.pages.stats import stats_page, timeline_page, turn_page
from dsh_notebook.wire.events import EventAdapter
from dsh_notebook.wire.pages import Page, PageArgs
from tests.client.parity import (
    each_recorded_run,
    first_difference,
    followed_events,
    js_driver,
    priced,
    run_js,
)
from tests.fixtures.record_streams import load

ANSWER = {"rows": rows_page, "stats": stats_page, "timeline": timeline_page, "turn": turn_page,
          "request-diff": request_diff_page, "messages": messages_page, "export": export_page}


@pytest.fixture(scope="module")
def js_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return js_driver(tmp_path_factory, "pages-main.ts")


def queries(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A question of every kind a panel asks, over this run's events."""
    n = len(events)
    turns = sorted({e["turn"] for e in events if e["type"] == "turn/start"})
    frozen = [e["seq"] for e in events if e["type"] == "request/frozen"]
    tools = sorted({e["name"] for e in events if e["type"] == "tool/call"})
    qs: list[dict[str, Any]] = [{"kind": "facets"}, {"kind": "rows", "limit": 1000}, {"kind": "rows", "offset": 5, "limit": 3},
                                {"kind": "rows", "seq": n // 2, "limit": 7}, {"kind": "rows", "seq": n - 1, "limit": 4}]
    for text in ("type:tool/result", "name:bash exit:1", "exit:!0", "test", '"tool call"', "seq:4..9 type:tool", "turn:x", "README"):
        qs.append({"kind": "rows", "filter": {"text": text}, "limit": 1000})
    for turn in turns:
        qs.append({"kind": "rows", "filter": {"turn": turn}, "limit": 1000})
        qs.append({"kind": "turn", "turn": turn})
    for tool in tools:
        qs.append({"kind": "rows", "filter": {"tool": tool, "type": "tool/call"}, "limit": 1000})
    for table in ("requests", "tools", "turns", "decisions"):
        qs += [{"kind": "stats", "table": table, "limit": 1000}, {"kind": "stats", "table": table, "offset": 1, "limit": 2}]
    qs += [{"kind": "timeline", "limit": 1000, "axis": True}, {"kind": "timeline", "bar": 2, "limit": 3},
           {"kind": "turn", "seq": n // 2}, {"kind": "turn"}, {"kind": "request-diff", "seq": 0}]
    for seq in frozen:
        qs += [{"kind": "request-diff", "seq": seq}, {"kind": "request-diff", "seq": seq - 1, "offset": 1, "limit": 2},
               {"kind": "messages", "seq": seq, "limit": 1000}, {"kind": "messages", "seq": seq, "request": True, "limit": 1000},
               {"kind": "messages", "seq": seq, "limit": 2}]
    qs += [{"kind": "export", "format": "csv", "filter": {"text": "type:tool"}}, {"kind": "export", "format": "csv", "offset": 3, "limit": 5},
           {"kind": "export", "format": "jsonl", "filter": {"text": "name:bash"}}]
    return qs


def python_pages(events: list[dict[str, Any]], qs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    typed = [EventAdapter.validate_python(e) for e in events]
    p = SessionPages("s_pages", lambda n: typed[:n])
    p.extend([json.dumps(e, separators=(",", ":")) for e in events])
    p.figures()
    out = []
    for q in qs:
        query = PageArgs.model_validate({"sessionId": "s_pages", "query": q}).query
        out.append(facets_page(p) if query.kind == "facets" else ANSWER[query.kind](p, query))  # type: ignore[operator]
    return out


def wire(page: dict[str, Any]) -> dict[str, Any]:
    """A page as ``session/page`` sends it; an export's JSON lines compared as JSON."""
    out: dict[str, Any] = Page.model_validate({"page": page}).model_dump(mode="json", by_alias=True)["page"]
    if out["kind"] == "export" and out["text"].startswith("{"):
        out["text"] = [json.loads(x) for x in out["text"].splitlines()]
    return out


@each_recorded_run
def test_the_browser_and_the_kernel_give_the_same_pages(js_pages: Path, fixture: Path, tmp_path: Path) -> None:
    events = followed_events(load(fixture))
    qs = queries(events)
    python = python_pages(events, qs)
    js = run_js(js_pages, tmp_path, {**priced(events), "queries": qs})
    assert len(js) == len(qs) > 30
    for q, a, b in zip(qs, python, js, strict=True):
        pa, pb = wire(a), wire(b)
        assert pa == pb, f"{q}: {first_difference(pa, pb)}"
    # the queries ask something of every kind, and the answers are not empty
    assert {q["kind"] for q in qs} == {"facets", "rows", "stats", "timeline", "turn", "request-diff", "messages", "export"}
    assert python[1]["total"] == len(events) and python[0]["types"]
    decisions = next(p for q, p in zip(qs, python, strict=True) if q == {"kind": "stats", "table": "decisions", "limit": 1000})
    assert decisions["total"] == len({e.get("mode") or "unrecorded" for e in events if e["type"] == "approval/decided"})
