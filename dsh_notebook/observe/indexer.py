"""Keep the search index current while sessions are written — off the host loop, batched.

:func:`index_writer` gives the process's one :class:`IndexWriter`. Its
:meth:`IndexWriter.observer` is a session observer: per event it only puts ``(DSH_HOME, log
path)`` on a queue. A daemon thread collects the paths for a short batch window and refreshes each changed log
from its flushed file (:meth:`SearchIndex.refresh_log`), one transaction per log. Failures are
logged and never reach the session: the index can always be rebuilt from the logs.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
BATCH_S = 0.25


class IndexWriter:
    """One daemon thread for the process; each queued item is ``(home, log path)``."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Path, Path]] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
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

    @staticmethod
    def _refresh(home: Path, paths: list[Path]) -> None:
        from .search import SearchIndex

        try:
            index = SearchIndex(home)
        except Exception:
            log.exception("search index of %s cannot be opened (it is rebuilt on the next search)", home)
            return
        try:
            for path in paths:
                index.refresh_log(path)
        except Exception:
            log.exception("search index update failed (it is rebuilt from the logs on the next search)")
        finally:
            index.close()


_writer: IndexWriter | None = None
_lock = threading.Lock()


def index_writer() -> IndexWriter:
    """The process's index writer (started on first use)."""
    global _writer
    with _lock:
        if _writer is None:
            _writer = IndexWriter()
        return _writer
