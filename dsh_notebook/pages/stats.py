"""``stats``, ``timeline`` and ``turn`` pages (:mod:`.indexed`): the figures of ``show --stats``
(``session_stats``, the one fold), a table (requests, tools, turns, decisions by mode) or a turn
at a time.

The timeline lists every turn followed by its request attempts and tool calls in the order they
started (the bars). Its time axis keeps what the session was busy with: :func:`busy_spans` are
the bars' spans and each turn's start and end, merged; the browser cuts the idle gaps between
them over a threshold out of the axis (js/src/model/axis-cut.ts), with a mark saying how long
each was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.stats import SessionStats
from ..analysis.stats_view import sent_lines
from ..wire.pages import StatsQuery, TimelineQuery, TurnQuery
from .indexed import Figures, SessionPages

JsonDict = dict[str, Any]


def _dump(model: Any) -> JsonDict:
    out: JsonDict = model.model_dump(mode="json")
    return out


def stats_page(p: SessionPages, q: StatsQuery) -> JsonDict:
    figures = p.figures()
    stats = figures.stats
    table: list[Any] = getattr(stats, q.table)
    offset, index = q.offset, None
    if q.seq is not None:
        index = next((i for i, r in enumerate(table) if getattr(r, "seq", None) == q.seq), None)
        if index is not None:
            offset = max(0, index - q.limit // 2)
    if "sent" not in figures.cache:
        figures.cache["sent"] = sent_lines(stats)
    return {"kind": "stats", "count": figures.count, "table": q.table, "total": len(table), "offset": offset,
            "index": index, "rows": [_dump(r) for r in table[offset:offset + q.limit]],
            "totals": _dump(stats.totals), "sent": figures.cache["sent"]}


@dataclass
class Timeline:
    """The timeline's rows as (kind, position in stats.turns / requests / tools), the bars' rows,
    each bar row's bar, the busy spans (computed when first asked)."""

    rows: list[tuple[str, int]]
    bar_rows: list[int]
    row_of_seq: dict[int, int]
    bar_of_row: dict[int, int]
    busy: list[tuple[int, int]] | None = None


def timeline(figures: Figures) -> Timeline:
    cache = figures.cache
    found: Timeline | None = cache.get("timeline")
    if found is not None:
        return found
    stats = figures.stats
    by_turn: dict[int, list[tuple[int, int, str, int]]] = {}
    for i, r in enumerate(stats.requests):
        by_turn.setdefault(r.turn, []).append((r.sent_time, r.seq, "request", i))
    for i, c in enumerate(stats.tools):
        by_turn.setdefault(c.turn, []).append((c.start_time, c.seq, "tool", i))
    rows: list[tuple[str, int]] = []
    bar_rows: list[int] = []
    row_of_seq: dict[int, int] = {}
    for ti, t in enumerate(stats.turns):
        row_of_seq.setdefault(t.seq, len(rows))
        rows.append(("turn", ti))
        for _start, seq, kind, i in sorted(by_turn.get(t.turn, ())):
            row_of_seq[seq] = len(rows)
            bar_rows.append(len(rows))
            rows.append((kind, i))
    found = cache["timeline"] = Timeline(rows, bar_rows, row_of_seq, {r: b for b, r in enumerate(bar_rows)})
    return found


def busy_spans(stats: SessionStats, now: int) -> list[tuple[int, int]]:
    """What the session was busy with: every bar's span, each turn's start and end; merged."""
    spans: list[tuple[int, int]] = []
    for r in stats.requests:
        spans.append((r.sent_time, r.end_time if r.end_time is not None else max(now, r.sent_time)))
    for c in stats.tools:
        spans.append((c.start_time, c.end_time if c.end_time is not None else max(now, c.start_time)))
    for t in stats.turns:
        spans.append((t.start_time, t.start_time))
        if t.end_time is not None:
            spans.append((t.end_time, t.end_time))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            if b > merged[-1][1]:
                merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


def timeline_page(p: SessionPages, q: TimelineQuery) -> JsonDict:
    figures = p.figures()
    stats = figures.stats
    tl = timeline(figures)
    offset, index = q.offset, None
    if q.bar is not None and q.bar < len(tl.bar_rows):
        index = tl.bar_rows[q.bar]
    elif q.seq is not None:
        index = tl.row_of_seq.get(q.seq)
    if index is not None:
        offset = max(0, index - q.limit // 2)
    bar_of_row = tl.bar_of_row
    rows = []
    for r in range(offset, min(len(tl.rows), offset + q.limit)):
        kind, i = tl.rows[r]
        model = stats.turns[i] if kind == "turn" else stats.requests[i] if kind == "request" else stats.tools[i]
        rows.append({"kind": kind, "stats": _dump(model), "bar": bar_of_row.get(r)})
    if q.axis and tl.busy is None:
        tl.busy = busy_spans(stats, figures.last_time)
    return {"kind": "timeline", "count": figures.count, "total": len(tl.rows), "bars": len(tl.bar_rows),
            "offset": offset, "index": index, "rows": rows, "busy": tl.busy if q.axis else None,
            "totals": _dump(stats.totals)}


def turn_page(p: SessionPages, q: TurnQuery) -> JsonDict:
    figures = p.figures()
    stats = figures.stats
    turns = stats.turns
    k: int | None = None
    if q.turn is not None:
        k = next((i for i, t in enumerate(turns) if t.turn == q.turn), None)
    elif q.seq is not None:
        k = max((i for i, t in enumerate(turns) if t.seq <= q.seq), default=None)
    if k is None and turns and q.turn is None:
        k = len(turns) - 1
    if k is None:
        return {"kind": "turn", "count": figures.count, "turn": None, "turns": len(turns), "first": None,
                "previous": None, "next": None, "last": None}
    t = turns[k]
    end = t.end_seq if t.end_seq is not None else figures.count - 1
    calls = {c.call_id for c in stats.tools if c.turn == t.turn}
    approvals = []  # the turn's approvals (js: approvalSeqs(events.slice(...))), in the log's order
    for call_id, a in figures.approvals.items():
        if call_id in calls:
            inside = {k: s for k, s in a.items() if t.seq <= s <= end}
            if inside:
                approvals.append({"callId": call_id, **inside})
    return {"kind": "turn", "count": figures.count, "turn": _dump(t),
            "requests": [_dump(r) for r in stats.requests if r.turn == t.turn],
            "tools": [_dump(c) for c in stats.tools if c.turn == t.turn], "approvals": approvals,
            "turns": len(turns), "first": turns[0].turn, "previous": turns[k - 1].turn if k > 0 else None,
            "next": turns[k + 1].turn if k + 1 < len(turns) else None, "last": turns[-1].turn}
