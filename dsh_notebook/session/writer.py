"""The writer half of a session log: :class:`SessionLog` observes a Session and makes its
events durable (see :mod:`.persistence` for the format and the reader, :mod:`.logfile` for the
lock and the durable append)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from ..errors import LogFormatError, LogWriteError, SessionError
from ..wire.base import to_json
from ..wire.events import AnyEvent
from .logfile import append_durably, ensure_private_dir, open_locked, write_error
from .persistence import LoadedLog, header_for
from .session import Session

__all__ = ["SessionLog"]


class SessionLog:
    """Append-only JSONL writer that observes a Session (commit = queue, flush = write+fsync).

    It holds the session's writer lock (:func:`.logfile.open_locked`) from construction to
    :meth:`close`. ``flush`` may run on a worker thread while the host loop commits: the queue has
    its own lock and flushes are serialised, so lines reach the file in seq order. A failed write
    keeps the lines queued (see :func:`.logfile.append_durably`) and raises the coded error.
    """

    def __init__(self, session: Session, path: str | Path, *, written: int = 0, fd: int | None = None) -> None:
        """Queue every event from seq ``written`` on; a new file gets the header first."""
        self.session = session
        self.path = Path(path)
        if fd is None:
            ensure_private_dir(self.path.parent)
            fd = open_locked(self.path, create=True)
            if written == 0 and os.fstat(fd).st_size > 0:
                # a new log in a file that holds another's lines: appending would mix two sessions'
                # seqs in one file (unreadable past the first); `reopen` continues a log
                os.close(fd)
                raise SessionError(f"a session log already exists at {self.path}; a new session's log is "
                                   "never appended to it (resume that session, or choose another path)",
                                   code="SESSION_EXISTS")
        self._fd = fd
        self._queue_lock = threading.Lock()
        self._io_lock = threading.Lock()
        self._pending: list[tuple[int, str]] = [(s, session.line(s)) for s in range(written, len(session))]
        self._good = os.fstat(fd).st_size
        if self._good == 0:
            self._pending.insert(0, (-1, to_json(header_for(session))))
        self.flushed_seq = written - 1
        self.last_error: LogWriteError | None = None
        self._unsubscribe = session.subscribe(self._on_event)

    @classmethod
    def reopen(cls, session: Session, loaded: LoadedLog, *, fd: int | None = None) -> SessionLog:
        """Continue a loaded log: cut a torn tail, then queue the events after the loaded ones.

        ``fd`` is the locked descriptor the caller took before loading (else one is taken now)."""
        own = fd is None
        fd = open_locked(loaded.path, create=False) if fd is None else fd
        try:
            try:
                os.ftruncate(fd, loaded.good_bytes)
            except OSError as exc:
                raise write_error(exc, loaded.path) from None
            if not loaded.ends_with_newline:
                append_durably(fd, b"\n", loaded.good_bytes, loaded.path)
        except BaseException:
            if own:
                os.close(fd)
            raise
        return cls(session, loaded.path, written=len(loaded.events), fd=fd)

    def _on_event(self, event: AnyEvent) -> None:
        line = self.session.line(event.seq)
        with self._queue_lock:
            self._pending.append((event.seq, line))

    @property
    def pending(self) -> int:
        """Lines queued and not yet durable."""
        return len(self._pending)

    def flush(self) -> None:
        """Write every queued line and fsync: afterwards all committed events are durable.

        On ``DISK_FULL`` / ``LOG_WRITE_FAILED`` nothing is lost and nothing torn is left: the lines
        stay queued and the next flush writes them from the same offset."""
        with self._io_lock:
            if self._fd < 0:
                raise LogFormatError(f"{self.path}: log is closed", code="LOG_CLOSED")
            with self._queue_lock:
                batch = list(self._pending)
            if batch or self._good != os.fstat(self._fd).st_size:
                data = "".join(line + "\n" for _, line in batch).encode()
                try:
                    self._good = append_durably(self._fd, data, self._good, self.path)
                except LogWriteError as exc:
                    self.last_error = exc
                    raise
                with self._queue_lock:
                    del self._pending[: len(batch)]
                if batch and batch[-1][0] >= 0:
                    self.flushed_seq = batch[-1][0]
            self.last_error = None

    def close(self) -> None:
        """Flush, stop observing, close the file (which releases the writer lock)."""
        if self._fd < 0:
            return
        try:
            self.flush()
        finally:
            self._unsubscribe()
            with self._io_lock:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
