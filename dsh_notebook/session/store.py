"""``SessionStore``: the open sessions of a process, and the saved ones under ``<home>/sessions``.

Keeping sessions open is the store's job; writing them is :class:`.writer.SessionLog`'s.

Resume order (``resume(id)``): load the log → :meth:`Session.restore` with ``mark_seed=False``
(every event re-checked as on a live append) → :func:`close_interrupted_turn` → ``session/end-seed``
→ attach a :class:`SessionLog` (cutting a torn tail) and flush. The crash closers come **before**
the end-seed: they describe how the *dead* run ended (they carry its last event's time), so the
seed part is a closed history and everything after ``session/end-seed`` is the new process's own
facts (``first_live_seq`` points right after the seed).
"""

from __future__ import annotations

import gc
import json
import os
import secrets
import stat
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import JsonValue

from ..errors import LogFormatError, LogWriteError, SessionError
from ..wire.base import tag
from .closers import close_interrupted_turn
from .logfile import open_locked, writer_of
from .persistence import LoadedLog, ensure_private_dir, load_log, read_regular
from .session import Session
from .writer import SessionLog

__all__ = ["SessionStore", "SessionSummary", "new_session_id", "summarize_log"]


def new_session_id() -> str:
    return "s_" + secrets.token_hex(6)


@dataclass(frozen=True)
class SessionSummary:
    """One row of ``%dsh sessions`` / ``python -m dsh_notebook sessions``."""

    id: str
    title: str
    turns: int
    last_activity_ms: int
    event_count: int
    path: str
    status: str  # open | busy (written by another process) | idle | interrupted | unreadable
    cwd: str = ""

    def to_dict(self) -> dict[str, JsonValue]:
        d = asdict(self)
        return {
            "id": d["id"],
            "title": d["title"],
            "turns": d["turns"],
            "lastActivityMs": d["last_activity_ms"],
            "eventCount": d["event_count"],
            "path": d["path"],
            "status": d["status"],
            "cwd": d["cwd"],
        }


def _title_of(line: bytes) -> str | None:
    try:
        ev = json.loads(line)
    except ValueError:
        return None
    msg = ev.get("message") or {}
    if (msg.get("source") or {}).get("kind", "user") != "user":
        return None
    text = "".join(b.get("text", "") for b in msg.get("content", ()) if isinstance(b, dict))
    text = " ".join(text.split())
    return text[:57] + "..." if len(text) > 60 else text


def summarize_log(path: Path, *, status: str | None = None) -> SessionSummary:
    """A cheap summary: scans the log's bytes without validating every event."""
    data = read_regular(path)
    if data is None:
        return SessionSummary(path.stem, "", 0, 0, 0, str(path), "unreadable")
    lines = data.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    try:
        header = json.loads(lines[0]) if lines else {}
        assert isinstance(header, dict) and tag(header) == "session"
    except (ValueError, AssertionError):
        return SessionSummary(path.stem, "", 0, 0, 0, str(path), "unreadable")
    body = lines[1:]
    title = ""
    for line in body:
        if b'"type":"user/message"' in line:
            found = _title_of(line)
            if found is not None:
                title = found
                break
    last_time = int(header.get("createdAt") or 0)
    while body:
        try:
            last_time = int(json.loads(body[-1])["time"])
            break
        except (ValueError, KeyError, TypeError):
            body.pop()  # a torn tail
    starts = data.count(b'"type":"turn/start"')
    if status is None and writer_of(path) not in (None, os.getpid()):
        status = "busy"  # another process or kernel is writing it now
    if status is None:
        open_turn = data.rfind(b'"type":"turn/start"') > data.rfind(b'"type":"turn/end"')
        status = "interrupted" if open_turn else "idle"
    return SessionSummary(
        str(header.get("id") or path.stem), title, starts, last_time, len(body), str(path),
        status, str(header.get("cwd") or ""),
    )  # fmt: skip


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


class SessionStore:
    """Open sessions by id, each with its :class:`SessionLog`; saved ones under ``home``."""

    def __init__(self, home: str | Path) -> None:
        self.home = Path(home)
        self.sessions_dir = self.home / "sessions"
        self._open: dict[str, Session] = {}
        self._logs: dict[str, SessionLog] = {}
        self._lock = threading.RLock()
        self.warnings: dict[str, list[str]] = {}  # what resuming a session had to drop or defer

    def path_for(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise SessionError(f"bad session id {session_id!r}", code="BAD_SESSION_ID")
        return self.sessions_dir / f"{session_id}.jsonl"

    def create(self, cwd: str = "", *, session_id: str | None = None) -> Session:
        """A new, empty session with a log file (header written and flushed)."""
        with self._lock:
            sid = session_id or new_session_id()
            path = self.path_for(sid)
            ensure_private_dir(self.sessions_dir)
            if sid in self._open or path.exists():
                raise SessionError(f"session {sid} already exists", code="SESSION_EXISTS")
            session = Session(sid, cwd=cwd)
            self._attach(session, SessionLog(session, path))
            return session

    def _attach(self, session: Session, log: SessionLog) -> None:
        try:
            log.flush()
        except LogWriteError as exc:  # kept queued: the first flush that can write, writes it
            self.warnings.setdefault(session.id, []).append(exc.message)
        self._open[session.id] = session
        self._logs[session.id] = log

    def get(self, session_id: str) -> Session | None:
        """The open session with this id, or ``None``."""
        return self._open.get(session_id)

    def open(self, session_id: str) -> Session:
        """The open session with this id, resuming it from its log if it is not open."""
        with self._lock:
            return self._open.get(session_id) or self.resume(session_id)

    def resume(self, session_id: str) -> Session:
        """Rebuild a saved session (see the module doc for the order); an open one is returned.

        The writer lock is taken first: a log another writer holds is ``SESSION_BUSY`` and is
        neither read nor cut. What loading had to drop is kept in :attr:`warnings`."""
        with self._lock:
            if session_id in self._open:
                return self._open[session_id]
            path = self.path_for(session_id)
            fd = open_locked(path, create=False)
            try:
                session, loaded = self._restore(session_id, path)
                log = SessionLog.reopen(session, loaded, fd=fd)
            except BaseException:
                os.close(fd)
                raise
            self.warnings[session_id] = list(loaded.warnings)
            self._attach(session, log)
            return session

    def _restore(self, session_id: str, path: Path) -> tuple[Session, LoadedLog]:
        """Load and re-check the log, close an interrupted turn, mark the seed (writes nothing)."""
        loaded = load_log(path)
        if loaded.id != session_id:
            raise LogFormatError(
                f"{loaded.path}: header id {loaded.id!r} is not {session_id!r}",
                code="LOG_HEADER",
            )
        was_enabled = gc.isenabled()
        gc.disable()  # ~100k long-lived objects and no garbage: skip the gen-2 rescans
        try:
            session = Session.restore(
                session_id,
                loaded.events,
                cwd=loaded.header.cwd,
                created_at=loaded.header.created_at,
                mark_seed=False,
            )
        finally:
            if was_enabled:
                gc.enable()
        close_interrupted_turn(session)
        session.mark_seed()
        return session, loaded

    def log(self, session_id: str) -> SessionLog:
        return self._logs[session_id]

    def flush(self, session_id: str) -> None:
        """The durability barrier for one session. A session closed meanwhile (host shutdown)
        has nothing left to flush: its close wrote everything."""
        log = self._logs.get(session_id)
        if log is not None:
            log.flush()

    def close(self, session_id: str) -> None:
        """Flush and forget an open session (its log stays on disk)."""
        with self._lock:
            log = self._logs.pop(session_id, None)
            self._open.pop(session_id, None)
        if log is not None:
            log.close()

    def close_all(self) -> None:
        for sid in list(self._open):
            self.close(sid)

    @property
    def open_ids(self) -> list[str]:
        return list(self._open)

    def list_saved(self) -> list[SessionSummary]:
        """Every saved session, most recent activity first."""
        if not self.sessions_dir.is_dir():
            return []
        out = [
            summarize_log(p, status="open" if p.stem in self._open else None)
            for p in self.sessions_dir.glob("*.jsonl")
            if _is_regular(p)  # a FIFO, device or socket named like a log is not a session
        ]
        return sorted(out, key=lambda s: (s.last_activity_ms, s.id), reverse=True)
