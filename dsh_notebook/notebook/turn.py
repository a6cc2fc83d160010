"""One submitted prompt, followed to its turn's end: the blocking wait and the ``--bg`` handle.

:class:`TurnRun` opens ``session/follow`` *before* it sends ``session/prompt``, so nothing of the
turn can be missed. The follow callback runs on the client's delivery thread: it feeds the
:class:`~.result.TurnTracker` (under a lock) and, when a cell renders, hands each item to the
main thread through a thread-safe queue. The main thread (``wait()``):

- renders items into the cell (:class:`~.render.TurnView` → a sink), coalescing updates;
- services the :class:`~.mainthread.MainThreadRunner` (the ``python`` tool) the moment work arrives;
- answers approvals with ``input()`` — the kernel's stdin — then ``session/approve``;
- turns a ``KeyboardInterrupt`` (kernel Interrupt) into ``session/cancel`` and keeps waiting for
  the ``turn/end`` (``aborted``, every call answered); a second interrupt stops waiting.

``--bg`` returns the run itself: ``await run`` / ``run.wait()`` / ``run.cancel()`` / ``run.result``.
"""

from __future__ import annotations

import asyncio
import builtins
import concurrent.futures
import queue
import threading
import uuid
from collections.abc import Generator
from typing import Any

from ..errors import DshError, HostError, RunCancelled
from ..wire.events import AnyEvent
from .approvals import Asker, StdinApprovals
from .link import TurnClient
from .mainthread import MainThreadRunner
from .render import TurnView
from .result import TurnResult, TurnTracker

_WAKE = ("wake", None)
_TICK = 0.1


class TurnRun:
    """A prompt in flight. ``wait()`` is the blocking cell; ``await`` it in ``--bg`` mode."""

    def __init__(self, client: TurnClient, session_id: str, text: str, *, mode: str = "queue",
                 runner: MainThreadRunner | None = None, view: TurnView | None = None) -> None:
        self.client, self.session_id, self.text, self.mode = client, session_id, text, mode
        self.request_id = "req_" + uuid.uuid4().hex[:12]
        self.runner = runner
        self.view = view
        self.tracker = TurnTracker(session_id, self.request_id)
        self.interrupted = False
        self._lock = threading.Lock()
        self._items: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._future: concurrent.futures.Future[TurnResult] = concurrent.futures.Future()
        self.approvals = StdinApprovals()
        self._sub: Any = None
        self._stream_error: Exception | None = None

    # --- starting -------------------------------------------------------------------------------

    def start(self) -> TurnRun:
        cursor = self.client.last_seq(self.session_id)
        self._sub = self.client.follow(self.session_id, self._on_item, cursor=cursor, on_end=self._on_end)
        try:
            self.client.prompt(self.session_id, self.text, mode=self.mode, request_id=self.request_id)
        except BaseException:
            self._close()
            raise
        return self

    def _on_item(self, item: Any) -> None:  # the client's delivery thread
        if not isinstance(item, dict):
            return
        with self._lock:
            was_done = self.tracker.done
            events = self.tracker.feed(item)
            finished = self.tracker.done and not self._future.done()
            visible = self._visible(item, events, was_done)
        if self.view is not None and visible is not False:
            self._items.put(("item", (item, visible)))
        # after the put: once the main thread sees an approval waiting, the item that announced it
        # is already queued, so the view can show the call before ``input()`` blocks
        self.approvals.note(item, events)
        if finished:
            self._future.set_result(self.tracker.result())
            self._close()
            self._items.put(_WAKE)

    def _visible(self, item: dict[str, Any], events: list[AnyEvent], was_done: bool) -> Any:
        """What of ``item`` belongs to this turn's view: False (nothing), None (the live frame),
        or the list of this turn's events it carried."""
        tracker = self.tracker
        if was_done or not tracker.started or item.get("type") in ("snapshot", "status"):
            return False
        if item.get("type") != "event":
            return None
        end = tracker.end.seq if tracker.end else None
        return [e for e in events if e.seq >= tracker.start_seq and (end is None or e.seq <= end)]

    def _on_end(self, error: Exception | None = None) -> None:
        if not self._future.done():
            self._stream_error = error or HostError("the follow stream ended before the turn did", code="STREAM_ENDED")
            self._items.put(_WAKE)

    def _close(self) -> None:
        sub, self._sub = self._sub, None
        if sub is not None:
            try:
                sub.close()
            except DshError:
                pass

    # --- the handle -----------------------------------------------------------------------------

    @property
    def result(self) -> TurnResult | None:
        return self._future.result() if self._future.done() else None

    def done(self) -> bool:
        return self._future.done()

    def cancel(self) -> None:
        """Cancel the turn through the Controller (``session/cancel``); the turn ends aborted."""
        self.client.cancel(self.session_id)

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._await().__await__()

    async def _await(self) -> TurnResult:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[TurnResult] = loop.create_future()

        def copy(f: concurrent.futures.Future[TurnResult]) -> None:
            if not waiter.done():
                waiter.set_result(f.result())

        def done(f: concurrent.futures.Future[TurnResult]) -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(copy, f)

        def wake() -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(self._drain)

        self._future.add_done_callback(done)

        remove = self.runner.add_waker(wake) if self.runner else None
        try:
            return await waiter
        finally:
            if remove:
                remove()

    def _drain(self) -> None:
        if self.runner is not None:
            self.runner.drain()

    def __repr__(self) -> str:
        state = self.result.summary() if self.result else "running"
        return f"<dsh run {self.request_id} · session {self.session_id} · {state}>"

    # --- the blocking wait (main thread) --------------------------------------------------------

    def wait(self, timeout: float | None = None, *, ask: Asker | None = None, grace: float = 60.0) -> TurnResult:
        """Block until the turn ends, rendering, serving main-thread work and approvals.

        ``ask`` (default: ``input``, looked up at call time — ipykernel swaps it per request so it
        reaches the front end's stdin) answers approvals the session waits for.

        A ``KeyboardInterrupt`` cancels the turn and waits (at most ``grace`` s) for its end;
        the result then has ``reason.kind == "aborted"`` and :attr:`interrupted` is set.
        """
        if ask is None:
            ask = _stdin_input
        remove = self.runner.add_waker(lambda: self._items.put(_WAKE)) if self.runner else None
        deadline = None if timeout is None else _now() + timeout
        try:
            while not self._future.done():
                try:
                    self._pump(ask)
                except KeyboardInterrupt:
                    if not self.tracker.started:
                        raise RunCancelled(
                            f"interrupted while the prompt waited behind a running turn; it stays queued in "
                            f"{self.session_id} (%dsh stop cancels the running turn)", code="INTERRUPTED") from None
                    if self.interrupted:
                        raise RunCancelled(f"stopped waiting; turn {self.tracker.turn} of {self.session_id} "
                                           "is still being cancelled", code="INTERRUPTED") from None
                    self.interrupted = True
                    self.cancel()
                    deadline = _now() + grace
                if self._stream_error is not None and not self._future.done():
                    raise self._stream_error
                if deadline is not None and _now() > deadline and not self._future.done():
                    raise RunCancelled(f"the turn did not end within {timeout if not self.interrupted else grace}s", code="TIMEOUT")
            self._pump_rest()
        finally:
            if remove:
                remove()
            if self.view is not None and self.view.sink is not None:
                self.view.sink.flush()
        return self._future.result()

    def _pump(self, ask: Asker | None) -> None:
        try:
            kind, payload = self._items.get(timeout=_TICK)
        except queue.Empty:
            kind, payload = "tick", None
        if kind == "item":
            self._render(*payload)
        if self.runner is not None:
            self.runner.drain()
        self._tick()
        if ask is not None:
            self._ask_approvals(ask)

    def _pump_rest(self) -> None:
        while True:
            try:
                kind, payload = self._items.get_nowait()
            except queue.Empty:
                return
            if kind == "item":
                self._render(*payload)

    def _render(self, item: Any, visible: list[AnyEvent] | None) -> None:
        """``visible``: None for a live frame of this turn, else the events of this turn."""
        if self.view is not None and (visible is None or visible):
            self.view.feed(item, visible)

    def _tick(self) -> None:
        if self.view is not None and self.view.sink is not None:
            self.view.sink.tick()

    def _ask_approvals(self, ask: Asker) -> None:
        sink = self.view.sink if self.view is not None else None

        def answer(call_id: str, decision: str) -> None:
            try:
                self.client.approve(self.session_id, call_id, decision)
            except HostError as exc:
                if exc.code != "UNKNOWN_APPROVAL":  # already decided elsewhere (the widget)
                    raise

        def no_stdin(text: str) -> None:
            if self.view is not None:
                self.view.add_note(text)

        def before() -> None:  # render what is queued (the call, "waiting for approval") first
            self._pump_rest()
            if sink is not None:
                sink.flush()

        self.approvals.ask(ask, answer, before=before, no_stdin=no_stdin)


def _stdin_input(prompt: str) -> str:
    return builtins.input(prompt)


def _now() -> float:
    import time

    return time.monotonic()
