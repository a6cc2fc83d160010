"""Work that must run on the kernel's main thread, requested from the Host's loop thread.

The ``python`` tool runs user code in the notebook namespace, and that must happen on the main
thread (DESIGN §2). The Host loop calls ``await runner.call(fn)``; the item waits in a thread-safe
queue until the main thread *services* it:

- a blocking ``%dsh`` wait (or ``handle.wait()``) drains the queue between frames — it is woken at
  once through :meth:`MainThreadRunner.add_waker`;
- otherwise (``--bg``) the item is scheduled on the kernel's asyncio loop, captured when the
  extension loaded; it runs as soon as the kernel is idle (or while a cell ``await``\\ s).

A ``KeyboardInterrupt`` raised while an item runs cancels that item and propagates to the
servicing wait, which then cancels the turn through the Controller.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ...errors import RunCancelled

T = TypeVar("T")


class MainThreadRunner:
    """A queue of callables for the main thread, serviced by waits or by the kernel loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.main_thread = threading.main_thread()
        self.loop = loop  # the kernel's loop (``--bg`` servicing); None in terminal IPython
        self._items: collections.deque[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = (
            collections.deque()
        )
        self._lock = threading.Lock()
        self._wakers: list[Callable[[], None]] = []

    @classmethod
    def capture(cls) -> MainThreadRunner:
        """A runner bound to the asyncio loop running on this (main) thread, if any."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        return cls(loop)

    # --- requesting side (any thread) ----------------------------------------------------------

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue ``fn`` for the main thread; the future resolves with its value or exception."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if threading.current_thread() is self.main_thread:
            self._run_one(fn, future)
            return future
        with self._lock:
            self._items.append((fn, future))
            wakers = list(self._wakers)
        for wake in wakers:
            wake()
        if not wakers and self.loop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.drain)
            except RuntimeError:  # the loop closed meanwhile
                pass
        return future

    async def call(self, fn: Callable[[], T]) -> T:
        """``await`` from any asyncio loop (the Host's): run ``fn`` on the main thread."""
        return await asyncio.wrap_future(self.submit(fn))

    # --- servicing side (main thread) ----------------------------------------------------------

    def add_waker(self, wake: Callable[[], None]) -> Callable[[], None]:
        """While registered, ``wake()`` is called (from any thread) when an item is queued."""
        with self._lock:
            self._wakers.append(wake)
            pending = bool(self._items)
        if pending:
            wake()

        def remove() -> None:
            with self._lock:
                if wake in self._wakers:
                    self._wakers.remove(wake)
            if self._items and self.loop is not None and not self.loop.is_closed():
                self.loop.call_soon_threadsafe(self.drain)

        return remove

    @property
    def pending(self) -> int:
        return len(self._items)

    def drain(self) -> int:
        """Run every queued item on this thread; return how many ran."""
        ran = 0
        while True:
            with self._lock:
                if not self._items:
                    return ran
                fn, future = self._items.popleft()
            ran += self._run_one(fn, future)

    @staticmethod
    def _run_one(fn: Callable[[], Any], future: concurrent.futures.Future[Any]) -> bool:
        if not future.set_running_or_notify_cancel():
            return False  # the requester gave up (the tool call was cancelled)
        try:
            value = fn()
        except KeyboardInterrupt:
            future.set_exception(RunCancelled("interrupted by the user (kernel interrupt)", code="INTERRUPTED"))
            raise
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(value)
        return True
