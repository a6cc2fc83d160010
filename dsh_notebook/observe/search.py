"""Search across sessions (issue 12 item 6): an SQLite FTS5 index in ``$DSH_HOME/search.sqlite``.

The index holds the searchable text of every session's events — user prompts, assistant answers
(and the arguments of the tool calls they make), ``tool/call`` arguments and ``tool/result``
text — keyed by session id, seq and type. It is **never the only copy of anything**: the logs
are the facts, and the index is rebuilt from them whenever it is missing, unreadable or stale.

- **Refresh**: a log whose size or mtime differs from what the index recorded is read from where
  the index stopped (only whole lines; a log that shrank is indexed again whole). Before each
  search every log is checked; a deleted log leaves the index.
- **Live**: :class:`~dsh_notebook.observe.indexer.IndexWriter` observes live sessions; it only
  notes which log changed (nothing is done on the host loop) and a background thread refreshes
  those logs in batches — from the flushed file, so the index never holds what the log does not.

``python -m dsh_notebook sessions --search TEXT`` and ``%dsh sessions --search TEXT`` print the
matching sessions, each with its events (seq, type, snippet). Every word of TEXT must occur
(case-insensitive; a trailing ``*`` matches a prefix).
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from ..wire.base import tag

INDEX_NAME = "search.sqlite"
SCHEMA_VERSION = 1
_MAX_TEXT = 200_000  # characters indexed per event
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS logs (session_id TEXT PRIMARY KEY, path TEXT, size INTEGER, mtime_ns INTEGER,
                                 offset INTEGER, last_seq INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS events USING fts5(session_id UNINDEXED, seq UNINDEXED, type UNINDEXED,
                                                     text, tokenize = 'unicode61');
INSERT OR IGNORE INTO meta VALUES ('version', '{SCHEMA_VERSION}');
"""


class MatchRow(TypedDict):
    """One matching event of a session (``sessions --search --json``)."""

    seq: int
    type: str
    snippet: str


class SessionMatches(TypedDict):
    """One matching session: where its log is, its title and its matching events."""

    sessionId: str
    log: str
    title: str | None
    matches: list[MatchRow]


def event_text(ev: Mapping[str, object]) -> str | None:
    """The searchable text of one event in its wire form, or ``None`` for unsearchable types."""
    kind = tag(ev)
    if kind == "tool/call":
        return f"{ev.get('name', '')} {ev.get('arguments', '')}"
    if kind == "external/call":  # an external agent's call (issue 41): who, which tool, with what
        client = ev.get("client")
        who = client.get("name", "") if isinstance(client, dict) else ""
        return f"{who} {ev.get('tool', '')} {ev.get('arguments', '')}"
    if kind == "external/result":
        parts_of = ev.get("content")
        texts = [str(p.get("text") or "") for p in parts_of if isinstance(p, dict)] if isinstance(parts_of, list) else []
        return "\n".join(t for t in texts if t) or None
    if kind not in ("user/message", "assistant/message", "tool/result"):
        return None
    parts = []
    message = ev.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            if tag(block) == "text":
                parts.append(str(block.get("text", "")))
            elif tag(block) == "tool-call":
                parts.append(f"{block.get('name', '')} {block.get('arguments', '')}")
    return "\n".join(p for p in parts if p) or None


def fts_query(text: str) -> str:
    """User text → an FTS5 query: every word, each quoted (no FTS syntax leaks through)."""
    words = re.findall(r"[\w*]+", text, flags=re.UNICODE)
    terms = []
    for w in words:
        core = w.replace("*", "")
        if core:
            terms.append(f'"{core}"' + ("*" if w.endswith("*") else ""))
    return " AND ".join(terms)


@dataclass(frozen=True)
class Match:
    session_id: str
    seq: int
    type: str
    snippet: str

    def to_dict(self) -> MatchRow:
        return {"seq": self.seq, "type": self.type, "snippet": self.snippet}


class SearchIndex:
    """The FTS5 index of ``home``'s sessions. Open one per thread."""

    def __init__(self, home: str | Path) -> None:
        self.home = Path(home)
        self.sessions_dir = self.home / "sessions"
        self.path = self.home / INDEX_NAME
        self.db = self._open()

    def _open(self) -> sqlite3.Connection:
        self.home.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # deleted: its journal files belong to the old index
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        for _ in range(2):
            try:
                db = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(_SCHEMA)
                row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
                if row and row[0] == str(SCHEMA_VERSION):
                    return db
                db.close()
            except sqlite3.DatabaseError:  # not a database / corrupt: it is only an index
                pass
            for suffix in ("", "-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        raise sqlite3.DatabaseError(f"cannot create the search index {self.path}")

    def close(self) -> None:
        self.db.close()

    # -- writing ------------------------------------------------------------------------------
    def _last_seq(self, session_id: str) -> int:
        row = self.db.execute("SELECT last_seq FROM logs WHERE session_id=?", (session_id,)).fetchone()
        return -1 if row is None or row[0] is None else int(row[0])

    def add_events(self, session_id: str, events: Sequence[Mapping[str, object]]) -> int:
        """Index events (wire dicts) newer than the session's indexed seq; returns how many."""
        last = self._last_seq(session_id)
        rows = []
        for ev in events:
            seq = ev.get("seq")
            if not isinstance(seq, int) or seq <= last:
                continue
            last = seq
            text = event_text(ev)
            if text:
                rows.append((session_id, seq, str(tag(ev)), text[:_MAX_TEXT]))
        self.db.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", rows)
        self.db.execute(
            "INSERT INTO logs (session_id, last_seq) VALUES (?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET last_seq = excluded.last_seq", (session_id, last))
        return len(rows)

    def refresh(self) -> int:
        """Bring the index up to date with every log on disk; returns the events added."""
        added = 0
        known = {r[0]: r[1] for r in self.db.execute("SELECT session_id, path FROM logs")}
        on_disk = set()
        for log in sorted(self.sessions_dir.glob("*.jsonl")) if self.sessions_dir.is_dir() else ():
            on_disk.add(log.stem)
            added += self.refresh_log(log)
        with self.db:
            for sid in set(known) - on_disk:  # a deleted log leaves the index too
                self._forget(sid)
        return added

    def refresh_log(self, log: Path) -> int:
        """Index what ``log`` holds beyond what the index has (nothing when size and mtime match)."""
        sid = log.stem
        try:
            st = log.stat()
        except OSError:
            return 0
        if not stat.S_ISREG(st.st_mode):  # a directory or a FIFO named *.jsonl: never opened (a FIFO blocks)
            return 0
        row = self.db.execute("SELECT session_id, path, size, mtime_ns, offset FROM logs WHERE session_id=?",
                              (sid,)).fetchone()
        if row is not None and row[2] == st.st_size and row[3] == st.st_mtime_ns:
            return 0
        with self.db:
            return self._index_file(sid, log, st.st_size, st.st_mtime_ns, row)

    def _forget(self, sid: str) -> None:
        self.db.execute("DELETE FROM events WHERE session_id=?", (sid,))
        self.db.execute("DELETE FROM logs WHERE session_id=?", (sid,))

    def _index_file(self, sid: str, log: Path, size: int, mtime_ns: int, row: tuple[Any, ...] | None) -> int:
        offset = int(row[4] or 0) if row is not None else 0
        if offset > size:  # rewritten shorter: index it again from the start
            self._forget(sid)
            offset = 0
        with log.open("rb") as f:
            f.seek(offset)
            data = f.read(max(0, size - offset))
        end = data.rfind(b"\n") + 1  # only whole lines; a line being written waits
        events = []
        for line in data[:end].splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict) and "seq" in ev:
                events.append(ev)
        added = self.add_events(sid, events)
        self.db.execute("UPDATE logs SET path=?, size=?, mtime_ns=?, offset=? WHERE session_id=?",
                        (str(log), size, mtime_ns, offset + end, sid))
        return added

    # -- reading ------------------------------------------------------------------------------
    def search(self, text: str, *, limit: int = 50) -> list[Match]:
        query = fts_query(text)
        if not query:
            return []
        rows = self.db.execute(
            "SELECT session_id, seq, type, snippet(events, 3, '[', ']', '…', 12) FROM events "
            "WHERE events MATCH ? ORDER BY session_id, CAST(seq AS INTEGER) LIMIT ?", (query, limit)).fetchall()
        return [Match(r[0], int(r[1]), r[2], " ".join(str(r[3]).split())) for r in rows]
