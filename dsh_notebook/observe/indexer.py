"""Keep the search index current while sessions are written — off the host loop, batched.

:func:`index_writer` gives the process's one :class:`IndexWriter` for a ``DSH_HOME``. Its
:meth:`IndexWriter.observer` is a session observer: per event it only puts the log's path on a
queue. A daemon thread collects the paths for a short batch window and refreshes each changed log
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
_writers: dict[Path, IndexWriter] = {}
_lock = threading.Lock()


class IndexWriter:
    def __init__(self, home: Path) -> None:
        self.home = home
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._idle = threading.Event()
        self._idle.set()
        self._thread = threading.Thread(target=self._run, name="dsh-search-index", daemon=True)
        self._thread.start()

    def observer(self, log_path: str | Path) -> Callable[[Any], None]:
        path = Path(log_path)

        def on_event(_event: Any) -> None:
            self._idle.clear()
            self._queue.put(path)

        return on_event

    def touch(self, log_path: str | Path) -> None:
        """Refresh this log soon (e.g. after its final flush)."""
        self._idle.clear()
        self._queue.put(Path(log_path))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Until every queued refresh has run (tests, shutdown)."""
        return self._idle.wait(timeout)

    def _run(self) -> None:
        from .search import SearchIndex

        index: SearchIndex | None = None
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = {first}
            try:
                while True:
                    item = self._queue.get(timeout=BATCH_S)
                    if item is None:
                        return
                    batch.add(item)
            except queue.Empty:
                pass
            try:
                index = index or SearchIndex(self.home)
                for path in sorted(batch):
                    index.refresh_log(path)
            except Exception:
                log.exception("search index update failed (it is rebuilt from the logs on the next search)")
                index = None
            if self._queue.empty():
                self._idle.set()


def index_writer(home: str | Path) -> IndexWriter:
    key = Path(home).expanduser().resolve()
    with _lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = IndexWriter(key)
        return writer
