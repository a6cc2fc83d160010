"""``show ID --search QUERY [--export jsonl|csv]``: the events of one session matching a query
(:mod:`dsh_notebook.pages.query`), printed as rows (seq, turn, type, tool, snippet with hits in ``[ ]``) or exported —
``jsonl``: the matching events themselves, one per line; ``csv``: one row per event with the columns
``seq,time,turn,type,name,exit,snippet``, ``time`` in ISO 8601 UTC to the millisecond
(``2026-12-07T04:47:14.322Z``, as the inspector's CSV). Secrets are redacted in every form."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from pydantic import JsonValue

from ..pages.query import Hit, marked, parse_query, search_events
from ..pages.rows import CSV_COLUMNS, iso_time
from ..wire.base import tag


def load_events(path: Path) -> list[dict[str, JsonValue]]:
    """The wire events of a log (the header and unreadable lines left out)."""
    from ..session.inspect import inspect_log

    out = []
    for line in inspect_log(path).lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and isinstance(ev.get("seq"), int):
            out.append(ev)
    return out


def export_rows(hits: list[Hit], fmt: str, out: TextIO) -> None:
    from ..redaction import redact, redact_data

    if fmt == "jsonl":
        for h in hits:
            out.write(json.dumps(redact_data(dict(h.event)), ensure_ascii=False) + "\n")
        return
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for h in hits:
        ev: Mapping[str, Any] = h.event
        w.writerow([ev.get("seq"), iso_time(ev.get("time")), "" if h.turn is None else h.turn, tag(ev) or "",
                    h.name or "", "" if h.exit is None else h.exit, redact(h.snippet)])


def format_rows(query: str, hits: list[Hit]) -> str:
    from ..redaction import redact

    if not hits:
        return f"no events match {query!r}\n"
    buf = io.StringIO()
    buf.write(f"{len(hits)} event{'s' if len(hits) != 1 else ''} match {query!r}\n")
    for h in hits:
        turn = "" if h.turn is None else f"t{h.turn}"
        tool = h.name or ""
        if h.exit is not None:
            tool += f" exit {h.exit}"
        buf.write(redact(f"{h.event.get('seq'):>6}  {turn:<4} {tag(h.event) or '':<20} {tool:<14} {marked(h.snippet, h.marks)}").rstrip() + "\n")
    return buf.getvalue()


def show_search_main(args: Any) -> int:
    from ..session.inspect import resolve_target

    q = parse_query(str(args.search))
    hits = search_events(load_events(resolve_target(args.target)), q)
    if args.export:
        export_rows(hits, args.export, sys.stdout)
    elif getattr(args, "json", False):
        export_rows(hits, "jsonl", sys.stdout)
    else:
        sys.stdout.write(format_rows(str(args.search), hits))
    return 0
