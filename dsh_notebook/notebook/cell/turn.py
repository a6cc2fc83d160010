"""One submitted prompt, followed to its turn's end: the blocking wait and the ``--bg`` handle.

:class:`CellTurn` opens ``session/follow`` through the :class:`~dsh_notebook.client.DshClient`
*before* it sends ``session/prompt``, so nothing of the turn can be missed. The follow's
:class:`~dsh_notebook.client.model.ClientSessionModel` folds every item on the client's delivery
thread (under ``handle.cond``); everything here reads that model — the result
(:func:`~.result.turn_result`), the cell view (:class:`~.render.TurnView`) and the approvals
(:class:`~.approvals.StdinApprovals`). The main thread (``wait()``):

- renders the turn's segments into the cell (a sink) whenever the model changed, coalesced;
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
import functools
import threading
import uuid
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from ...client.dsh_client import DshClient
from ...client.follow import FollowHandle
from ...client.model import ClientSessionModel
from ...errors import DshError, HostError, RunCancelled
from ...host.waiting import WaitingTicker
from ...wire.fold_state import PauseState
from ..context.cells import CellRefJson
from ..context.mainthread import MainThreadRunner
from .approvals import Asker, StdinApprovals
from .debug_console import DebugConsole, describe_pause
from .live_view import LiveTurnView
from .result import TurnResult, turn_result
from .segments import Sink
from .sinks import DisplaySink

_TICK = 0.1
_AWAIT_TICK = 0.25


F = TypeVar("F", bound=Callable[..., Any])


def _one_line(method: F) -> F:
    """The handle's debugger calls (``.step()``, ``.edit()`` …) fail as one coded line in a cell,
    not a traceback through the client (the error stays the same ``HostError``, same code)."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except DshError as exc:
            line = f"\x1b[31mdsh [{exc.code}]\x1b[0m {exc.message}"
            exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]  # IPython shows only this
            raise exc from None

    return call  # type: ignore[return-value]


class CellTurn:
    """A prompt in flight. ``wait()`` is the blocking cell; ``await`` it in ``--bg`` mode."""

    def __init__(self, client: DshClient, session_id: str, text: str, *, mode: str = "queue",
                 runner: MainThreadRunner | None = None, sink: Sink | None = None,
                 cell: CellRefJson | None = None, clear_breakpoints: bool = False) -> None:
        self.client, self.session_id, self.text, self.mode = client, session_id, text, mode
        self.cell = cell  # the notebook cell that sent it ({cellId?, executionCount?}), if any
        self.clear_breakpoints = clear_breakpoints  # --bg --break: the breakpoints end with the turn
        self.request_id = "req_" + uuid.uuid4().hex[:12]
        self.runner = runner
        # the ticking "waiting for the model · N s" line, from the first second: a display shows it
        # as a note of the turn's view, a stream (console, IPython) as one line rewritten in place
        display = isinstance(sink, DisplaySink)
        self.view = LiveTurnView(self.request_id, sink, wait_every=1 if display else None) if sink is not None else None
        self.ticker = WaitingTicker(None, in_place=True, before_show=sink.flush) if sink is not None and not display else None
        self.interrupted = False
        self.handle: FollowHandle | None = None
        self._consumed: list[Any] = []  # pauses this handle stepped / continued from (kept: identity)
        self._clearing: threading.Thread | None = None
        self._settling = threading.Lock()
        self._future: concurrent.futures.Future[TurnResult] = concurrent.futures.Future()
        self._woken = False

    @property
    def model(self) -> ClientSessionModel:
        assert self.handle is not None, "start() first"
        return self.handle.model

    # --- starting -------------------------------------------------------------------------------

    def start(self) -> CellTurn:
        self.handle = self.client.follow(self.session_id, self._last_seq(), self._on_frame)
        self.approvals = StdinApprovals(self.handle.model, self.handle.cond)
        self._last_pause: int | None = None
        self.console = DebugConsole(self.client, self.session_id, self.handle.model, self.handle.cond)
        try:
            self.client.prompt(self.text, self.session_id, self.mode, request_id=self.request_id, cell=self.cell)
        except BaseException:
            self._close()
            raise
        return self

    def _last_seq(self) -> int | None:
        """Where the follow starts so that it sees only what comes next (None: from 0)."""
        try:
            return int(self.client.info(self.session_id).last_seq)
        except HostError as exc:
            if exc.code == "UNKNOWN_SESSION":
                return None  # the prompt itself will say so
            raise

    def _on_frame(self, _frame: Any, model: ClientSessionModel) -> None:  # the delivery thread
        handle = self.handle
        if handle is None or self._future.done():
            return
        with handle.cond:
            result = turn_result(model, self.session_id, self.request_id)
        if result is not None and not self._future.done():
            self._future.set_result(result)
            self._close()
            with self._settling:
                if self.clear_breakpoints:  # not on this (the delivery) thread: it answers the call
                    self._clearing = threading.Thread(target=self._clear_breakpoints, daemon=True)
                    self._clearing.start()
        self._wake()

    def settle(self, replacing: bool, timeout: float = 10.0) -> None:
        """Before the next prompt to this session: this run's own breakpoints (``--bg --break``,
        cleared when its turn ends) must not remove the next prompt's. If that prompt sets its own
        (``replacing``: they replace the set, and end with it) a clearing not yet begun is called
        off; one under way is waited for."""
        with self._settling:
            if replacing and self._clearing is None:
                self.clear_breakpoints = False
            clearing = self._clearing
        if clearing is not None:
            clearing.join(timeout)

    def _clear_breakpoints(self) -> None:
        try:
            self.client.debug(self.session_id, "break", stages=[])
        except DshError:
            pass  # the host is gone: so are the breakpoints

    def _wake(self) -> None:
        if self.handle is not None:
            with self.handle.cond:
                self._woken = True
                self.handle.cond.notify_all()

    def _close(self) -> None:
        handle = self.handle
        if handle is not None and not handle.closed:
            try:
                handle.close()
            except DshError:
                pass

    def _started(self) -> bool:
        """Whether a turn took this prompt (it is no longer waiting in the inbox)."""
        with self.model_lock():
            sub = self.model.submissions.get(self.request_id)
            return sub is not None and sub["state"] in ("claimed", "delivered")

    def model_lock(self) -> Any:
        assert self.handle is not None
        return self.handle.cond

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
        told: set[int] = set()
        try:
            while not waiter.done():  # a timer on the loop: it wakes, so a kernel Interrupt lands
                await asyncio.wait({waiter}, timeout=_AWAIT_TICK)
                self._tell_pause(told)
            return waiter.result()
        except asyncio.CancelledError as exc:  # the kernel's Interrupt cancels the awaiting cell
            line = (f"\x1b[31mdsh [INTERRUPTED]\x1b[0m stopped waiting; the run goes on in {self.session_id}"
                    f"{self._pause_hint()} (h.cancel() or %dsh stop ends it)")
            exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]  # still a CancelledError
            raise
        finally:
            if remove:
                remove()

    def _pause_hint(self) -> str:
        pause = self.paused if self.handle is not None else None
        return f", paused at stage {pause['stage']}: h.continue_() / h.step() go on" if pause else ""

    def _tell_pause(self, told: set[int]) -> None:
        """``await h`` on a run held at a breakpoint: nothing answers it while the cell awaits (the
        widget's messages wait for the cell too), so say so once per pause, and what to do."""
        with self.model_lock():
            pause = self.model.paused
            if pause is None or id(pause) in told:
                return
            told.add(id(pause))
            line = describe_pause(pause)
        print(f"{line} — nothing answers it while this cell awaits: interrupt the kernel, then "
              "h.continue_(), h.step() or h.edit(…) (or the widget)", flush=True)

    def _drain(self) -> None:
        if self.runner is not None:
            self.runner.drain()

    def __repr__(self) -> str:
        state = self.result.summary() if self.result else "running"
        return f"<dsh run {self.request_id} · session {self.session_id} · {state}>"

    # --- the blocking wait (main thread) --------------------------------------------------------

    @_one_line
    def wait(self, timeout: float | None = None, *, ask: Asker | None = None, grace: float = 60.0) -> TurnResult:
        """Block until the turn ends, rendering, serving main-thread work and approvals.

        ``ask`` (default: ``input``, looked up at call time — ipykernel swaps it per request so it
        reaches the front end's stdin) answers approvals the session waits for.

        A ``KeyboardInterrupt`` cancels the turn and waits (at most ``grace`` s) for its end;
        the result then has ``reason.kind == "aborted"`` and :attr:`interrupted` is set.
        """
        if ask is None:
            ask = _stdin_input
        remove = self.runner.add_waker(self._wake) if self.runner else None
        deadline = None if timeout is None else _now() + timeout
        try:
            while not self._future.done():
                try:
                    self._pump(ask)
                except KeyboardInterrupt:
                    if not self._started():
                        raise RunCancelled(
                            f"interrupted while the prompt waited behind a running turn; it stays queued in "
                            f"{self.session_id} (%dsh stop cancels the running turn)", code="INTERRUPTED") from None
                    if self.interrupted:
                        with self.model_lock():
                            sub = self.model.submissions.get(self.request_id)
                            turn = sub["turn"] if sub else None
                        raise RunCancelled(f"stopped waiting; turn {turn} of {self.session_id} "
                                           "is still being cancelled", code="INTERRUPTED") from None
                    self.interrupted = True
                    self.cancel()
                    deadline = _now() + grace
                handle = self.handle
                if handle is not None and handle.closed and not self._future.done():
                    raise handle.subscription.error or HostError(
                        "the follow stream ended before the turn did", code="STREAM_ENDED")
                if deadline is not None and _now() > deadline and not self._future.done():
                    raise RunCancelled(f"the turn did not end within {timeout if not self.interrupted else grace}s", code="TIMEOUT")
            self._render()
            self.console.finish(self._say)  # a run-to asked on stdin that could not happen says so
        finally:
            if remove:
                remove()
            if self.ticker is not None:
                self.ticker.clear()
            if self.view is not None and self.view.sink is not None:
                self.view.sink.flush()
        return self._future.result()

    def _pump(self, ask: Asker | None) -> None:
        with self.model_lock():
            if not self._woken and not self._future.done():
                self.model_lock().wait(_TICK)
            self._woken = False
        self._render()
        if self.runner is not None:
            self.runner.drain()
        if self.view is not None and self.view.sink is not None:
            self.view.sink.tick()
        if ask is not None:
            self._ask_approvals(ask)
            self.console.serve(ask, self._say, before=self._before_pause)

    def _before_pause(self, pause: PauseState) -> None:
        """The cell shows the turn up to the pause; what the debugger says comes after it, and the
        rest of the turn (the paused call's line with it) in a new display below — in order, with or
        without stdin (a live display would otherwise grow above the notices)."""
        self._render()
        if self.view is not None and self.view.sink is not None:
            self.view.sink.split(pause.get("callId"))

    def _say(self, text: str) -> None:
        print(text, flush=True)

    # --- the agent debugger from Python (``--bg`` runs, walkthroughs) ----------------------------

    @property
    def paused(self) -> PauseState | None:
        """Where the debugger holds this session's run now (``stage``, ``callId``, ``payload`` …)."""
        with self.model_lock():
            return dict(self.model.paused) if self.model.paused else None  # type: ignore[return-value]

    @_one_line
    def wait_paused(self, timeout: float = 60.0) -> PauseState:
        """Block until the run is paused (or raise ``TIMEOUT`` / the turn's end as ``NOT_PAUSED``)."""
        assert self.handle is not None
        seen = self._last_pause

        def new_pause(m: ClientSessionModel) -> bool:
            return (m.paused is not None and id(m.paused) != seen
                    and not any(m.paused is p for p in self._consumed)) or self._future.done()

        try:
            self.handle.wait(new_pause, timeout=timeout)
        except HostError as exc:
            if exc.code != "STREAM_ENDED":
                raise
        with self.model_lock():
            pause = self.model.paused
            if pause is None or id(pause) == seen or any(pause is p for p in self._consumed):
                raise HostError("the turn ended without pausing again", code="NOT_PAUSED")
            self._last_pause = id(pause)
            shown = dict(pause)
        self.console.handled(pause)  # answered from Python: wait() must not serve it again
        return shown  # type: ignore[return-value]

    @_one_line
    def step(self, timeout: float = 60.0) -> Any:
        """Go on to the next stage, whatever it is (it pauses there). Waits for the pause it needs
        first (after ``step()`` the next call acts on the next stage's pause); returns the debug
        state, or ``NOT_PAUSED`` (a coded line) when the turn ended without pausing again."""
        return self._resume("step", timeout)

    @_one_line
    def continue_(self, timeout: float = 60.0) -> Any:
        """Go on to the next breakpoint (or the turn's end); waits for a pause like :meth:`step`."""
        return self._resume("continue", timeout)

    @_one_line
    def run_to(self, where: str, timeout: float = 60.0) -> Any:
        """Pause once at a stage of a call (``"05 c3"``, ``"stage 5 of c3"``) and go on: waits for
        a pause like :meth:`step` (``NOT_PAUSED`` once the turn ended); ``RUN_TO_PASSED`` if the
        turn is already past it. Then :meth:`wait_paused` is that stage."""
        from ...agent.runto import parse_run_to

        stage, call = parse_run_to(where)
        pause = self._pause_to_act_on(timeout)
        if pause is None:
            raise HostError(f"the run is not paused: the turn ended ({self._ended()}); nothing to run on",
                            code="NOT_PAUSED")
        state = self.client.debug(self.session_id, "run-to", stage=stage, call=call)
        with self.model_lock():
            self._consumed.append(pause)
        self.console.handled(pause)
        return state

    @_one_line
    def edit(self, target: str, value: Any, call_id: str | None = None, timeout: float = 60.0) -> Any:
        """Change the paused stage's value (waits for a pause not yet stepped or continued from);
        ``NOT_PAUSED`` when the turn ended without one."""
        pause = self._pause_to_act_on(timeout)
        if pause is None:
            raise HostError(f"the turn ended ({self._ended()}) without pausing again: nothing to edit",
                            code="NOT_PAUSED")
        return self.client.debug(self.session_id, "edit", target=target, value=value, call_id=call_id)

    def _resume(self, action: str, timeout: float) -> Any:
        pause = self._pause_to_act_on(timeout)
        if pause is None:
            raise HostError(f"the run is not paused: the turn ended ({self._ended()}) without pausing again; "
                            f"nothing to {action} (h.result has it)", code="NOT_PAUSED")
        with self.model_lock():
            self._consumed.append(pause)  # the next step/continue/edit waits for a newer pause
        self.console.handled(pause)
        return self.client.debug(self.session_id, action)

    def _pause_to_act_on(self, timeout: float) -> Any:
        """The pause (the model's own object) a debugger call applies to — the current one unless
        this handle already stepped or continued from it, else the next — or None once the turn
        ended first. ``TIMEOUT`` after ``timeout`` seconds of a run that neither pauses nor ends."""
        assert self.handle is not None

        def fresh(m: ClientSessionModel) -> Any:
            return m.paused is not None and not any(m.paused is p for p in self._consumed)

        try:
            self.handle.wait(lambda m: fresh(m) or self._future.done(), timeout=timeout)
        except HostError as exc:
            if exc.code != "STREAM_ENDED":
                raise
        with self.model_lock():
            return self.model.paused if fresh(self.model) and not self._future.done() else None

    def _ended(self) -> str:
        result = self.result
        return result.reason.kind if result is not None else "ended"

    def _render(self) -> None:
        """Show this turn's segments if the model changed (the model is read under its lock); the
        waiting line first (wiped before the turn's next text is written)."""
        if self.view is None:
            return
        with self.model_lock():
            if self.ticker is not None:
                self.ticker.tick(None if self._future.done() else self.model.attempt)
            self.view.render(self.model)

    def _ask_approvals(self, ask: Asker) -> None:
        sink = self.view.sink if self.view is not None else None

        def answer(call_id: str, decision: str, scope: str = "call", **plan: str) -> None:
            try:  # scope "session": "allow for the rest of the session"; plan: exit_plan_mode's mode / feedback
                self.client.approve(self.session_id, call_id, decision, scope, **plan)
            except HostError as exc:
                if exc.code != "UNKNOWN_APPROVAL":  # already decided elsewhere (the widget)
                    raise

        def no_stdin(text: str) -> None:
            if self.view is not None:
                with self.model_lock():
                    self.view.add_note(text, self.model.cursor)

        def before() -> None:  # show what is known (the call, "waiting for approval") first
            self._render()
            if sink is not None:
                sink.flush()

        def after(call_id: str) -> None:  # the typed answer stays beside its call
            if sink is not None:
                sink.split(call_id)

        self.approvals.ask(ask, answer, before=before, no_stdin=no_stdin, after=after)


def _stdin_input(prompt: str) -> str:
    return builtins.input(prompt)


def _now() -> float:
    import time

    return time.monotonic()
