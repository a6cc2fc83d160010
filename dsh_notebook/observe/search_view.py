"""``sessions --search TEXT``: refresh the index, search it, print or return the matches grouped
by session (:mod:`.search` holds the index itself)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..pages.query import Query, marked, parse_query, search_events
from ..wire.base import tag
from .search import Match, SearchIndex, SessionMatches, fts_query


def _scan_logs(home: str | Path, q: Query, limit: int) -> list[Match]:
    """A query with field terms (``type:``, ``name:``, ``exit:``, ``turn:``, ``seq:``): every log read."""
    from .query_view import load_events

    found: list[Match] = []
    sessions = Path(home) / "sessions"
    for log in sorted(sessions.glob("*.jsonl")) if sessions.is_dir() else ():
        try:
            if not log.is_file():
                continue
            events = load_events(log)
        except Exception:  # a log that cannot be read now is skipped, as by the index
            continue
        for h in search_events(events, q):
            found.append(Match(log.stem, int(h.event["seq"]), str(tag(h.event)), marked(h.snippet, h.marks)))
            if len(found) >= limit:
                return found
    return found


def search_sessions(home: str | Path, text: str, *, limit: int = 50) -> list[SessionMatches]:
    """Refresh the index, search it: one dict per matching session with its ``matches``. A query
    with field terms (:mod:`.query`) reads the logs themselves instead of the text index."""
    q = parse_query(text)
    try:
        if q.has_fields:
            matches = _scan_logs(home, q, limit)
        else:
            matches = _search_index(home, text, limit)
    except (sqlite3.Error, OSError) as exc:
        from ..errors import UserError

        raise UserError(f"the search index in {home} cannot be used: {exc}", code="SEARCH_INDEX") from None
    return _group(home, matches)


def _search_index(home: str | Path, text: str, limit: int) -> list[Match]:
    index = SearchIndex(home)
    try:
        index.refresh()
        return index.search(text, limit=limit)
    finally:
        index.close()


def _group(home: str | Path, matches: list[Match]) -> list[SessionMatches]:
    from ..session.store import summarize_log

    out: dict[str, SessionMatches] = {}
    for m in matches:
        entry = out.get(m.session_id)
        if entry is None:
            log = Path(home) / "sessions" / f"{m.session_id}.jsonl"
            try:
                title = summarize_log(log).title
            except Exception:  # a log the index knows but that cannot be summarised now
                title = None
            entry = out[m.session_id] = {"sessionId": m.session_id, "log": str(log), "title": title, "matches": []}
        entry["matches"].append(m.to_dict())
    return list(out.values())


def format_search(text: str, found: list[SessionMatches]) -> str:
    if not found:
        return f"no events match {text!r}\n"
    lines = []
    for s in found:
        n = len(s["matches"])
        lines.append(f"{s['sessionId']}  {n} match{'es' if n != 1 else ''}  {s['title'] or ''}".rstrip())
        lines += [f"  {m['seq']:>6}  {m['type']:<17} {m['snippet']}" for m in s["matches"]]  # a shown column, not routing
    return "\n".join(lines) + "\n"


def search_main(args: Any) -> int:
    """``python -m dsh_notebook sessions --search TEXT [--limit N] [--json]``."""
    import sys

    from ..config import settings_from_env
    from ..errors import UserError

    text = str(args.search)
    q = parse_query(text)
    if not q.has_fields and not fts_query(text):
        raise UserError("--search needs at least one word to look for", code="BAD_FLAG")
    found = search_sessions(settings_from_env().home, text, limit=max(1, int(args.limit)))
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"query": text, "sessions": found}, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_search(text, found))
    return 0
