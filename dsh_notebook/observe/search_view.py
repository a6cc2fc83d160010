"""``sessions --search TEXT``: refresh the index, search it, print or return the matches grouped
by session (:mod:`.search` holds the index itself)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from .search import SearchIndex, SessionMatches, fts_query


def search_sessions(home: str | Path, text: str, *, limit: int = 50) -> list[SessionMatches]:
    """Refresh the index, search it: one dict per matching session with its ``matches``."""
    from ..session.store import summarize_log

    try:
        index = SearchIndex(home)
        try:
            index.refresh()
            matches = index.search(text, limit=limit)
        finally:
            index.close()
    except (sqlite3.Error, OSError) as exc:
        from ..errors import UserError

        raise UserError(f"the search index in {home} cannot be used: {exc}", code="SEARCH_INDEX") from None
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
    if not fts_query(text):
        raise UserError("--search needs at least one word to look for", code="BAD_FLAG")
    found = search_sessions(settings_from_env().home, text, limit=max(1, int(args.limit)))
    if getattr(args, "json", False):
        sys.stdout.write(json.dumps({"query": text, "sessions": found}, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_search(text, found))
    return 0
