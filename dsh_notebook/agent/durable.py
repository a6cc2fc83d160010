"""Making the log durable from the host loop: on a worker thread, or inline while flushes are quick.

A flush writes the lines committed since the last one and fsyncs (``SessionLog.flush``). The
agent flushes before every model request and at every turn end (DESIGN §4). On a disk a flush
takes a millisecond or more, so it runs on a worker thread and the host loop never waits on it.

Where the log lives on memory-backed storage (tmpfs, ``/dev/shm``) or on a device that
acknowledges at once, a flush takes a few microseconds, and handing it to a thread and back costs
far more than the flush itself: 80-150 µs of CPU per hand-off on a 2-core VM (the futex wake,
the self-pipe, the GIL passing between the threads), a quarter of a whole agent step
(``tests/benchmarks/bench_loop.py``). So :class:`Flusher` times every flush: after
``FAST_STREAK`` flushes in a row each under ``FAST_FLUSH_S`` the next ones run inline on the
loop; the first that takes longer sends the following ones back to the thread. A flush that
turns slow can hold the loop once, for its own duration, and never twice in a row.

The speed is a fact about the storage, not about one session: the agents of a process (the
sessions of a kernel or a host, their logs under one ``DSH_HOME``) share one :class:`FlushSpeed`,
so a new session starts knowing what the last one measured instead of handing its first
``FAST_STREAK`` flushes to a thread again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from time import perf_counter

log = logging.getLogger(__name__)

FAST_FLUSH_S = 0.0005  # a flush this quick costs less inline than the hand-off to a thread
FAST_STREAK = 4  # this many quick flushes in a row before the next ones run inline


class FlushSpeed:
    """How many flushes in a row were quick; shared by the flushers of one storage (thread-safe:
    a threaded flush records from its worker thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.streak = 0

    def record(self, quick: bool) -> None:
        with self._lock:
            self.streak = self.streak + 1 if quick else 0


PROCESS_FLUSH_SPEED = FlushSpeed()  # the agents of this process (see the module docstring)


class Flusher:
    """Runs a flush callable (write + fsync) inline or on a worker thread, by its measured speed.

    ``inline`` and ``threaded`` count the flushes of each kind (the loop benchmark reports them);
    ``clock`` is the timer (a test passes its own); ``speed`` the record it reads and updates
    (its own, unless it shares one: the agents pass :data:`PROCESS_FLUSH_SPEED`)."""

    def __init__(self, flush: Callable[[], None], *, clock: Callable[[], float] = perf_counter,
                 speed: FlushSpeed | None = None) -> None:
        self.flush = flush
        self.clock = clock
        self.speed = speed if speed is not None else FlushSpeed()
        self.inline = self.threaded = 0

    @property
    def runs_inline(self) -> bool:
        return self.speed.streak >= FAST_STREAK

    def _timed(self) -> None:
        t0 = self.clock()
        try:
            self.flush()
        finally:
            self.speed.record(self.clock() - t0 < FAST_FLUSH_S)

    async def __call__(self) -> None:
        """Flush; raises what the flush raised. A cancel while a threaded flush runs does not
        stop the write: it finishes on its thread, and its error is logged."""
        if self.runs_inline:
            self.inline += 1
            self._timed()
            return
        self.threaded += 1
        # a plain executor future (no Task, no context copy: the flush reads no context variable)
        done = asyncio.get_running_loop().run_in_executor(None, self._timed)
        done.add_done_callback(_retrieve)  # a cancel left it running: its error is still seen here
        await asyncio.shield(done)


def _retrieve(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("a flush whose turn was cancelled failed: %s", task.exception())


__all__ = ["FAST_FLUSH_S", "FAST_STREAK", "PROCESS_FLUSH_SPEED", "FlushSpeed", "Flusher"]
