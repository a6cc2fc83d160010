"""``rows``, ``facets`` and ``export`` pages (:mod:`.indexed`): the event list, filtered by the
selects and searched with ``show --search``'s query language (:mod:`.query`), a page at a time.

A filter's matching rows are computed once and kept (the last few filters of a session), so
scrolling a filtered list of 100,000 events asks for nothing but the rows on screen. The first
page of the unfiltered list can be served from the stored lines alone, before the index is built
(:func:`quick_rows`): the widget's first rows do not wait for the whole log to be read.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from ..wire.base import tag
from ..wire.pages import ExportQuery, RowFilter, RowsQuery
from .indexed import SessionPages
from .query import Query, QueryError, exit_code, matches, parse_query, snippet

JsonDict = dict[str, Any]
_CACHE = 6  # filters whose matching rows are kept per session
CSV_COLUMNS = ("seq", "time", "turn", "type", "name", "exit", "snippet")  # the CSV export's (show --search too)


def iso_time(ms: object) -> str:
    """An event's ``time`` (epoch milliseconds) in ISO 8601 UTC, ``2026-12-07T04:47:14.322Z`` (what
    JavaScript's ``Date.toISOString`` writes); anything else as it is ("" for none)."""
    if isinstance(ms, bool) or not isinstance(ms, int):
        return "" if ms is None else str(ms)
    try:
        at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    except OverflowError:
        return str(ms)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


class Listing:
    """The rows (event indices) a filter lists, and its query."""

    def __init__(self, rows: list[int], query: Query | None, error: str | None) -> None:
        self.rows, self.query, self.error = rows, query, error
        self._position: dict[int, int] | None = None

    def index(self, seq: int) -> int | None:
        """The row of event ``seq`` (``None``: not listed)."""
        if self._position is None:
            self._position = {s: i for i, s in enumerate(self.rows)}
        return self._position.get(seq)


def _key(f: RowFilter) -> tuple[Any, ...]:
    return (f.type or "", f.turn, f.tool or "", f.text)


def listing(p: SessionPages, f: RowFilter) -> Listing:
    """The rows passing ``f`` (all events when it is empty), cached until the log grows."""
    cache = p.listings
    key = _key(f)
    hit = cache.get(key)
    if hit is not None and hit[0] == p.count:
        cache.move_to_end(key)
        return hit[1]
    try:
        parsed = parse_query(f.text)
    except QueryError as exc:
        found = Listing([], None, f"BAD_QUERY: {exc.message}")
    else:
        q = None if parsed.empty else parsed
        if not (f.type or f.turn is not None or f.tool or q):
            found = Listing(list(range(p.count)), None, None)
        else:
            found = Listing(_match(p, f, q), q, None)
    cache[key] = (p.count, found)
    while len(cache) > _CACHE:
        cache.popitem(last=False)
    return found


def _match(p: SessionPages, f: RowFilter, q: Query | None) -> list[int]:
    out = []
    texts = q.texts if q is not None else []
    # the field terms (the free text is looked for in the cached lowercased texts below)
    fields = Query(types=q.types, names=q.names, exits=q.exits, turns=q.turns, seqs=q.seqs) \
        if q is not None and q.has_fields else None
    for i in range(p.count):
        if f.type and p.types[i] != f.type:
            continue
        if f.turn is not None and p.turns[i] != f.turn:
            continue
        if f.tool and p.tools[i] != f.tool:
            continue
        if fields is not None and not matches(fields, p.events[i], p.turns[i], p.tools[i]):
            continue
        if texts:
            low = p.low_text(i)
            if not all(t in low for t in texts):
                continue
        out.append(i)
    return out


def row(p: SessionPages, i: int, terms: list[str], durations: dict[int, int] | None) -> JsonDict:
    out: JsonDict = {"event": p.events[i], "turn": p.turns[i], "tool": p.tools[i],
                     "durationMs": durations.get(i) if durations is not None else None,
                     "citedBy": p.cited_by.get(i, [])}
    if terms:
        from .query import event_text

        out["snippet"] = {"text": snippet(event_text(p.events[i]), terms)[0]}
    return out


def rows_page(p: SessionPages, q: RowsQuery) -> JsonDict:
    """The ``rows`` page of ``q`` (the figures' durations when they are in, else ``partial``)."""
    found = listing(p, q.filter)
    index = None
    offset = q.offset
    if q.seq is not None:
        index = found.index(q.seq)
        if index is not None:
            offset = max(0, index - q.limit // 2)
    offset = min(offset, max(0, len(found.rows) - 1)) if found.rows else 0
    ready = p.figures_ready
    durations = p.figures().durations if ready else None
    terms = found.query.texts if found.query is not None else []
    return {"kind": "rows", "count": p.count, "total": len(found.rows), "offset": offset, "index": index,
            "rows": [row(p, i, terms, durations) for i in found.rows[offset:offset + q.limit]],
            "terms": terms, "error": found.error, "partial": not ready}


def quick_rows(lines: Sequence[str], total: int, q: RowsQuery) -> JsonDict:
    """The first rows of the unfiltered list from their stored ``lines`` alone (no index yet, the
    log ``total`` events long): each row's turn is its own or the last ``turn/start``'s before it
    on the page (``partial``)."""
    events = [json.loads(line) for line in lines]
    turn: int | None = None
    rows = []
    for ev in events:
        kind = tag(ev) or ""
        if kind == "turn/start" and isinstance(ev.get("turn"), int):
            turn = ev["turn"]
        own = ev.get("turn")
        name = str(ev.get("name")) if kind in ("tool/call", "approval/asked", "approval/decided") and ev.get("name") else None
        rows.append({"event": ev, "turn": own if isinstance(own, int) and not isinstance(own, bool) else turn,
                     "tool": name, "durationMs": None, "citedBy": []})
    return {"kind": "rows", "count": total, "total": total, "offset": q.offset, "index": None,
            "rows": rows, "terms": [], "error": None, "partial": True}


def facets_page(p: SessionPages) -> JsonDict:
    return {"kind": "facets", "count": p.count, "types": sorted(set(p.types)),
            "tools": sorted({t for t in p.tools if t}), "turns": sorted({t for t in p.turns if t is not None}),
            "mode": p.mode}


def export_page(p: SessionPages, q: ExportQuery) -> JsonDict:
    """Rows ``offset`` .. of the listed events as JSON lines or CSV — exactly what ``show --search
    QUERY --export`` writes for them (its snippet column, secrets redacted)."""
    from ..redaction import redact, redact_data
    from .query import event_text

    found = listing(p, q.filter)
    part = found.rows[q.offset:q.offset + q.limit]
    buf = io.StringIO()
    if q.format == "jsonl":
        for i in part:
            buf.write(json.dumps(redact_data(dict(p.events[i])), ensure_ascii=False) + "\n")
    else:
        w = csv.writer(buf, lineterminator="\n")
        if q.offset == 0:
            w.writerow(CSV_COLUMNS)
        terms = found.query.texts if found.query is not None else []
        for i in part:
            ev = p.events[i]
            w.writerow([ev.get("seq"), iso_time(ev.get("time")), "" if p.turns[i] is None else p.turns[i], tag(ev) or "",
                        p.tools[i] or "", "" if exit_code(ev) is None else exit_code(ev),
                        redact(snippet(event_text(ev), terms)[0])])
    return {"kind": "export", "count": p.count, "total": len(found.rows), "offset": q.offset, "rows": len(part),
            "text": buf.getvalue()}

