"""A saved session log read whole, for serving it read-only or embedding it in a page: its
header, stored lines, the model it last used and the :class:`~dsh_notebook.wire.endpoints.
SessionInfo` that describes it (``live: false``).

:func:`read_saved` validates every event (``load_log``). :func:`read_saved_fast` — the widget's
replay of a large log — only checks each line's frame (a JSON object whose ``seq`` is its line
number) and leaves the full validation to :meth:`SavedLog.verify`, which the read-only follow
runs off the loop, part by part, before it sends each part: the first rows are on screen before
the last line of a 100,000-event log is validated, and a bad line is still a coded error."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..demo import default_approve
from ..errors import DshError, HostError, LogFormatError
from ..wire.base import tag
from ..wire.endpoints import SessionInfo
from ..wire.events import AnyEvent, EventAdapter, RequestFrozen
from ..wire.log import SessionHeader
from .logfile import read_regular
from .persistence import _ListAdapter, load_log, parse_header

_FROZEN = '"type":"request/frozen"'
_MODE_CHANGED = '"type":"mode/changed"'
FAST_MIN_EVENTS = 5_000
"""Below this many events :func:`read_saved_fast` validates everything now (it costs < 0.1 s)."""


@dataclass(frozen=True)
class SavedLog:
    """A log read for read-only serving: its header, stored lines and the model it last used.
    ``checked``: every line was validated as an event (else :meth:`verify` does it)."""

    session_id: str
    header: SessionHeader
    lines: list[str]
    model: str | None
    path: str | None = None
    warnings: tuple[str, ...] = ()
    checked: bool = True

    def info(self, default_model: str) -> SessionInfo:
        cwd = self.header.cwd
        mode = self.mode()
        approve = default_approve(cwd) if mode is None else "deny" if mode == "dont-ask" else \
            "auto" if mode in ("bypass", "auto") else "ask"
        implied = "auto" if default_approve(cwd) == "auto" else "default"
        return SessionInfo(
            session_id=self.session_id, cwd=cwd, model=self.model or default_model,
            approve=approve, status="idle", live=False, last_seq=len(self.lines) - 1,
            log_path=self.path, mode=mode or implied,
        )  # fmt: skip

    def mode(self) -> str | None:
        """The permission mode the log's last ``mode/changed`` set (``None``: it never changed)."""
        for line in reversed(self.lines):
            if _MODE_CHANGED in line:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if tag(value) == "mode/changed":
                    mode = value.get("mode")
                    return mode if isinstance(mode, str) else None
        return None

    def verify(self, start: int, stop: int) -> None:
        """Validate ``lines[start:stop]`` as events (blocking: call it off the host loop); a bad
        line raises ``LOG_CORRUPT`` with its line number. A no-op for a log read checked."""
        if self.checked or start >= stop:
            return
        self.events(start, stop)

    def events(self, start: int, stop: int) -> list[AnyEvent]:
        """``lines[start:stop]`` as typed events (validated; blocking: off the host loop); a bad
        line raises ``LOG_CORRUPT`` with its line number."""
        if start >= stop:
            return []
        try:
            events: list[AnyEvent] = _ListAdapter.validate_json("[" + ",".join(self.lines[start:stop]) + "]", strict=True,
                                                                by_alias=True, by_name=False)
            return events
        except ValueError:
            pass
        out = []
        for n in range(start, stop):
            try:
                out.append(EventAdapter.validate_json(self.lines[n], strict=True, by_alias=True, by_name=False))
            except ValueError as exc:
                first = str(exc).splitlines()[1:2] or [str(exc)]
                raise LogFormatError(f"{self.path}: line {n + 2} is not a valid event: {first[0].strip()}",
                                     code="LOG_CORRUPT", line=n + 2) from None
        return out


def read_saved(path: str | Path) -> SavedLog:
    """Read a log for read-only serving (blocking: call it off the host loop)."""
    try:
        loaded = load_log(path)
    except DshError as exc:
        raise HostError(f"cannot read the saved session: {exc.message}", code=exc.code) from None
    header = loaded.header
    model = next((f"{e.provider}:{e.model}" for e in reversed(loaded.events) if isinstance(e, RequestFrozen)), None)
    return SavedLog(header.id, header, list(loaded.lines), model, str(loaded.path), tuple(loaded.warnings))


def read_saved_fast(path: str | Path) -> SavedLog:
    """:func:`read_saved` without validating the events now (``checked=False``): each line's
    frame is checked (``{"seq":N,…}`` with N its position); a log that fails that check (a torn
    tail, a hand-edited line) is read by :func:`read_saved`, which repairs or names it."""
    p = Path(path).expanduser()
    data = read_regular(p)
    if data is None:
        return read_saved(p)  # its coded error (missing, not a regular file)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return read_saved(p)
    lines = text.split("\n")
    if len(lines) < 2 or lines[-1] != "":
        return read_saved(p)  # no newline at the end: a torn tail (or a header only)
    lines.pop()
    try:
        header = parse_header(lines[0].encode(), p)
    except DshError as exc:
        raise HostError(f"cannot read the saved session: {exc.message}", code=exc.code) from None
    events = lines[1:]
    if len(events) < FAST_MIN_EVENTS:
        return read_saved(p)
    if not all(line.startswith(f'{{"seq":{n},') and line.endswith("}") for n, line in enumerate(events)):
        return read_saved(p)
    model = None
    for line in reversed(events):
        if _FROZEN in line:
            try:
                ev = json.loads(line)
                model = f"{ev['provider']}:{ev['model']}"
            except (ValueError, KeyError, TypeError):
                pass
            break
    return SavedLog(header.id, header, events, model, str(p), (), checked=False)
