"""Keep the search index current while sessions are written — off the host loop, batched.

:func:`index_writer` gives the process's one :class:`IndexWriter`. Its
:meth:`IndexWriter.observer` is a session observer: per event it only puts ``(DSH_HOME, log
path)`` on a queue. A daemon thread collects the paths for a short batch window and refreshes each changed log
from its flushed file (:meth:`SearchIndex.refresh_log`), one transaction per log. Failures never
reach the session (the index can always be rebuilt from the logs) and are one warning line, no
traceback: a full disk or a broken file system turns indexing off for that ``DSH_HOME`` in this
process (said once); any other failure is said once per message.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
BATCH_S = 0.25
_DISK_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EIO, errno.EROFS, errno.EFBIG}


class IndexWriter:
    """One daemon thread for the process; each queued item is ``(home, log path)``."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Path, Path]] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._disabled: set[Path] = set()  # homes whose index cannot be written (disk full …)
        self._said: set[tuple[Path, str]] = set()
        self._thread = threading.Thread(target=self._run, name="dsh-search-index", daemon=True)
        self._thread.start()

    def observer(self, home: str | Path, log_path: str | Path) -> Callable[[Any], None]:
        item = (Path(home), Path(log_path))

        def on_event(_event: Any) -> None:
            self._idle.clear()
            self._queue.put(item)

        return on_event

    def touch(self, home: str | Path, log_path: str | Path) -> None:
        """Refresh this log soon (e.g. after its final flush)."""
        self._idle.clear()
        self._queue.put((Path(home), Path(log_path)))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Until every queued refresh has run (tests, shutdown)."""
        return self._idle.wait(timeout)

    def _run(self) -> None:
        while True:
            batch = {self._queue.get()}
            try:
                while True:
                    batch.add(self._queue.get(timeout=BATCH_S))
            except queue.Empty:
                pass
            homes: dict[Path, list[Path]] = {}
            for home, path in batch:
                homes.setdefault(home, []).append(path)
            for home, paths in homes.items():
                self._refresh(home, sorted(set(paths)))
            if self._queue.empty():
                self._idle.set()

    def _refresh(self, home: Path, paths: list[Path]) -> None:
        if home in self._disabled:
            return
        from .search import SearchIndex

        index = None
        try:
            index = SearchIndex(home)
            for path in paths:
                index.refresh_log(path)
        except Exception as exc:
            self._failed(home, exc)
        finally:
            if index is not None:
                with contextlib.suppress(Exception):
                    index.close()

    def _failed(self, home: Path, exc: Exception) -> None:
        """One warning line, never a traceback. A full disk (or a broken file system) turns
        indexing off for ``home`` in this process; other failures are said once each."""
        text = " ".join(str(exc).split())[:200] or type(exc).__name__
        if _is_disk_problem(exc):
            self._disabled.add(home)
            log.warning("dsh: search index of %s not updated: %s; indexing is off until the next start "
                        "(search rebuilds the index from the logs)", home, text)
            return
        if (home, text) not in self._said:
            self._said.add((home, text))
            log.warning("dsh: search index of %s not updated: %s (search rebuilds it from the logs)", home, text)


def _is_disk_problem(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS:
        return True
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        return any(w in text for w in ("disk is full", "disk i/o", "readonly", "read-only", "unable to open", "cannot create"))
    return False


_writer: IndexWriter | None = None
_lock = threading.Lock()


def index_writer() -> IndexWriter:
    """The process's index writer (started on first use)."""
    global _writer
    with _lock:
        if _writer is None:
            _writer = IndexWriter()
        return _writer
