"""JSONL session logs (DESIGN §4): ``<home>/sessions/<id>.jsonl``, one header line then one event
per line, append-only.

:class:`SessionLog` observes a Session: a commit only queues the event's line (the Session
serialised it once; queuing is a list append), :meth:`SessionLog.flush` writes what is queued and
fsyncs — the durability barrier the agent calls before each model request and at each turn end.
Files are created 0600 in a 0700 directory.

:func:`load_log` reads a log back: a torn last line (a crash mid-write) is dropped and reported,
everything before it kept; a complete (newline-terminated) last line that does not parse is
``LOG_CORRUPT``, never deleted; a missing or unreadable header is ``LOG_HEADER``, an unknown version
``LOG_VERSION``, a bad line anywhere else ``LOG_CORRUPT`` with its line number, a missing file
``LOG_NOT_FOUND``. Events are validated with one ``validate_json`` over the joined lines (faster
than one call per line) and the per-line path is used only to locate an error.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from ..errors import LogFormatError
from ..wire.base import tag
from ..wire.events import AnyEvent, Event, EventAdapter
from ..wire.log import LOG_VERSION, SessionHeader
from .logfile import ensure_private_dir, read_regular
from .session import Session, collector_paused

__all__ = ["LOG_VERSION", "LoadedLog", "ensure_private_dir", "header_for", "load_log", "parse_header",
           "read_regular"]

CHUNK_BYTES = 1 << 20  # validate ~1 MB of lines at a time
_FIELD_SETS: dict[frozenset[str], set[str]] = {}
_ListAdapter: TypeAdapter[list[Any]] = TypeAdapter(list[Event])
# Logs are read strictly by their wire (camelCase) names (``strict=True, by_alias=True,
# by_name=False`` below): what we write is exactly JSON of the declared types, and strict JSON
# validation is both faster and a sharper corruption check.

def share_fields_sets(event: Any) -> None:
    """Let a loaded event and its message parts share one ``fields_set`` per distinct shape.

    Pydantic gives every model instance its own set of the fields it was given (0.2–0.7 KB
    each, more than many of the values); a 100k-event log holds a few dozen distinct ones. The
    models are frozen and pydantic copies the set before changing it (``model_copy``), so
    sharing is safe — and it takes a third off the memory of a resumed session.
    """
    message = event.__dict__.get("message")  # not getattr: pydantic's __getattr__ miss is slow
    fs = event.__pydantic_fields_set__
    shared = _FIELD_SETS.setdefault(frozenset(fs), fs)
    if shared is not fs:
        object.__setattr__(event, "__pydantic_fields_set__", shared)
    if message is not None and not isinstance(message, str):  # checkpoint/failed's message is text
        fs = message.__pydantic_fields_set__
        shared = _FIELD_SETS.setdefault(frozenset(fs), fs)
        if shared is not fs:
            object.__setattr__(message, "__pydantic_fields_set__", shared)


def header_for(session: Session) -> SessionHeader:
    """The header line of ``session``'s log."""
    return SessionHeader(id=session.id, cwd=session.cwd, created_at=session.created_at)


@dataclass
class LoadedLog:
    """A log as read: its header, its events, and what had to be dropped.

    ``lines`` (the events' JSON lines as stored) are read from the file on first use, so a
    resume, which does not need them, never holds a second copy of the log in memory.
    """

    path: Path
    header: SessionHeader
    events: list[AnyEvent]
    _lines: list[str] | None = None
    torn_tail: bool = False
    warnings: list[str] = field(default_factory=list)
    good_bytes: int = 0  # file length up to the end of the last good line
    ends_with_newline: bool = True

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            with open(self.path, "rb") as f:
                text = f.read(self.good_bytes).decode()
            self._lines = text.splitlines()[1 : 1 + len(self.events)]
        return self._lines


def parse_header(raw: bytes, path: Path) -> SessionHeader:
    """Line 1 of a log → its header. Unknown extra fields are ignored here (a reader stays
    lenient); the schema, closed, is what flags them."""
    try:
        header = json.loads(raw)
    except ValueError:
        raise LogFormatError(f"{path}: line 1 is not a JSON header", code="LOG_HEADER") from None
    if not isinstance(header, dict) or tag(header) != "session":
        raise LogFormatError(f"{path}: line 1 is not a session header", code="LOG_HEADER")
    if header.get("version") != LOG_VERSION:
        raise LogFormatError(
            f"{path}: log version {header.get('version')!r} is not supported (this reader: "
            f"{LOG_VERSION})",
            code="LOG_VERSION",
        )
    if not isinstance(header.get("id"), str) or not header["id"]:
        raise LogFormatError(f"{path}: the header has no session id", code="LOG_HEADER")
    cwd, created = header.get("cwd", ""), header.get("createdAt", 0)
    return SessionHeader.model_construct(
        id=header["id"], cwd=cwd if isinstance(cwd, str) else str(cwd),
        created_at=created if type(created) is int else 0,
    )  # fmt: skip


def load_log(path: str | Path) -> LoadedLog:
    """Read a session log (see module doc for what is refused and what is repaired)."""
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise LogFormatError(f"{path} is not a regular file (a FIFO, device or directory?)",
                                 code="LOG_NOT_FOUND")
    except FileNotFoundError:
        raise LogFormatError(f"no session log at {path}", code="LOG_NOT_FOUND") from None
    except OSError as exc:
        raise LogFormatError(f"cannot read {path}: {exc.strerror or exc}", code="LOG_NOT_FOUND") from None
    data = read_regular(path)
    if data is None:
        raise LogFormatError(f"cannot read {path} (not a readable regular file)", code="LOG_NOT_FOUND")
    ends_with_newline = data.endswith(b"\n")
    end = len(data) - 1 if ends_with_newline else len(data)
    first_nl = data.find(b"\n", 0, end)
    header_end = end if first_nl < 0 else first_nl
    if not data[:header_end].strip():
        raise LogFormatError(f"{path}: empty log (no header)", code="LOG_HEADER")
    header = parse_header(data[:header_end], path)
    if first_nl < 0:  # a header and nothing else
        return LoadedLog(path, header, [], [], False, [], len(data), ends_with_newline)
    last_nl = data.rfind(b"\n", 0, end)
    last = data[last_nl + 1 : end]
    with collector_paused():
        events, torn = _parse_events(data, first_nl + 1, last_nl, last, path)
    warnings: list[str] = []
    good = last_nl + 1 + len(last) + (1 if ends_with_newline else 0)
    if torn and ends_with_newline and last.strip():
        # a complete line was written whole: it is not a crash's torn tail, and deleting it
        # would destroy a fact. Refuse; `show` (lenient) can still read around it.
        raise LogFormatError(
            f"{path}: line {len(events) + 2}, the last line, is complete (newline-terminated) but "
            "not a valid event; it was not removed. Inspect it with `show`, then fix or delete "
            "that line to resume the session.",
            code="LOG_CORRUPT",
            line=len(events) + 2,
        )
    if torn:
        what = "an empty last line" if not last.strip() else f"a torn last line ({len(last)} bytes, no newline)"
        warnings.append(f"dropped {what} at line {len(events) + 2}")
        good, ends_with_newline = last_nl + 1, True
    return LoadedLog(path, header, events, None, torn, warnings, good, ends_with_newline)


def _parse_events(
    data: bytes, start: int, stop: int, last: bytes, path: Path
) -> tuple[list[AnyEvent], bool]:
    """Validate the lines in ``data[start:stop]`` and then ``last``; returns the events and
    whether ``last`` was torn (dropped).

    The fast path validates ~1 MB of lines at a time as one JSON array (a single
    ``validate_json`` call per chunk beats one per line) and shares the events' field sets as
    it goes, so memory peaks low; the last line is validated on its own, so a torn tail costs
    no second pass. The slow path only locates a corrupt line.
    """
    events: list[AnyEvent] = []
    pos = start
    while pos < stop:
        cut = data.find(b"\n", min(pos + CHUNK_BYTES, stop), stop)
        cut = stop if cut < 0 else cut
        try:
            joined = b"[" + data[pos:cut].replace(b"\n", b",") + b"]"
            chunk = _ListAdapter.validate_json(joined, strict=True, by_alias=True, by_name=False)
        except ValueError:
            _locate_corrupt(path)
            raise LogFormatError(f"{path}: the log is not valid JSON lines", code="LOG_CORRUPT") from None
        for ev in chunk:
            share_fields_sets(ev)
        events.extend(chunk)
        pos = cut + 1
    torn = False
    try:
        events.append(EventAdapter.validate_json(last, strict=True, by_alias=True, by_name=False))
        share_fields_sets(events[-1])
    except ValueError:
        torn = True
    for n, ev in enumerate(events):
        if ev.seq != n:
            raise LogFormatError(
                f"{path}: line {n + 2} has seq {ev.seq}, expected {n}", code="LOG_CORRUPT", line=n + 2
            )
    return events, torn


def _locate_corrupt(path: Path) -> None:
    """Raise ``LOG_CORRUPT`` naming the first bad line before the last (the slow path)."""
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")[1:-1]
    for n, line in enumerate(lines):
        try:
            EventAdapter.validate_json(line, strict=True, by_alias=True, by_name=False)
        except ValueError as exc:
            first = str(exc).splitlines()[1:2] or [str(exc)]
            raise LogFormatError(
                f"{path}: line {n + 2} is not a valid event: {first[0].strip()}",
                code="LOG_CORRUPT",
                line=n + 2,
            ) from None

