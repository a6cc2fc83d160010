"""The scheduler: a batch of tool calls → ``tool/call`` and ``tool/result`` facts (stages 02–04).

:func:`execute_tool_calls` runs the tool-call blocks of one assistant message:

- each call's ``tool/call`` is appended **when it starts**, in model order, and its seq kept;
- concurrency-safe calls share a bounded rolling pool (``max_parallel``); any other call is an
  exclusive **barrier** that runs alone; every call is re-classified just before it starts;
- policy and approval run one call at a time, in model order; bodies run concurrently;
- :meth:`ToolBatch.commit_ready` appends ``tool/result`` (``sourceEventSeqs=[call seq]``) for
  the finished prefix only, so results enter the log **in model order**, not completion order;
- deferred contexts are collected and returned; the agent appends them after the batch;
- with the agent debugger active (``pause_points``), calls run one at a time and each may pause
  at stage 02 (its ``tool/call`` logged), 03 (before the pipeline runs it) and 04 (its outcome
  ready, before ``tool/result``); an edit of the arguments changes what the call runs with
  (``on_arguments_edited`` lets the agent show the model the edited call), an edit of the result
  what is committed, and the ``tool/result`` cites the edits after its ``tool/call``;
- on cancellation it starts nothing more, cancels the running calls (``CANCELLED``), commits
  their results, appends a synthetic ``tool/call`` + ``tool/result`` pair
  (``ABORTED_BEFORE_DISPATCH``) for each call never started, and re-raises. Every call gets
  exactly one result. An internal failure (the Session refusing an append) stops the batch
  and re-raises without fabricating results — crash repair answers what is left;
- ``calls`` are the blocks as logged (secrets masked): what ``tool/call`` records and a pause
  shows; ``run_arguments`` (call id → the arguments as the model wrote them, held in memory
  only) is what each call runs with, unless an edit at a pause replaced them (issue 35: redaction
  never changes what a tool runs or writes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..session.session import Session, now_ms
from ..wire.events import DebugStage, ToolCall, ToolResult
from ..wire.messages import ToolCallBlock, UserMessage, plugin_text, tool_text
from ..wire.pause import CallPayload, PausePayload, ResultPayload
from .outcome import ToolOutcome, error_outcome
from .runtime import ToolRuntime

DEFERRED_FORM = "deferred-context"
ArgumentsEdited = Callable[[str, str, tuple[int, ...]], None]
"""``(call id, edited raw arguments, debug/edit seqs)``: called when an edit changed a call."""
Review = Callable[[ToolCallBlock, ToolOutcome], ToolOutcome]
"""Called with each call and its outcome just before its ``tool/result`` is committed."""


class StagePause(Protocol):
    value: Any
    edits: list[int]


class PausePoints(Protocol):
    """Where a run may pause (the agent debugger, :mod:`dsh_notebook.agent.debugger`)."""

    @property
    def active(self) -> bool: ...

    async def pause_point(
        self, stage: DebugStage, *, payload: PausePayload, tools: Sequence[str] = (), call_id: str | None = None,
        seq: int | None = None, name: str | None = None, value: Any = None, cite: tuple[int, ...] = (),
    ) -> StagePause | None: ...


@dataclass
class BatchOutcome:
    """What a finished batch hands back to the agent."""

    concluded: bool = False
    deferred: list[UserMessage] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)


class ToolBatch:
    """The state of one batch: who started, who finished, how far results are committed."""

    def __init__(
        self,
        session: Session,
        calls: Sequence[ToolCallBlock],
        *,
        turn: int,
        step: int,
        runtime: ToolRuntime,
        max_parallel: int = 10,
        pause_points: PausePoints | None = None,
        on_arguments_edited: ArgumentsEdited | None = None,
        review: Review | None = None,
        run_arguments: Mapping[str, str] | None = None,
    ) -> None:
        self.session, self.calls, self.runtime = session, list(calls), runtime
        self.run_arguments = dict(run_arguments or {})  # call id → the model's own arguments
        self.review = review  # sees (and may reword) each outcome just before it is committed
        self.turn, self.step = turn, step
        self.pause_points = pause_points if pause_points is not None and pause_points.active else None
        self.on_arguments_edited = on_arguments_edited
        self.max_parallel = 1 if self.pause_points is not None else max(1, max_parallel)
        n = len(self.calls)
        self.call_seqs: list[int | None] = [None] * n
        self.slots: list[ToolOutcome | None] = [None] * n
        self.dispatched = [False] * n  # the body started (cancellation → CANCELLED)
        self.edits: list[tuple[int, ...]] = [()] * n  # debug/edit seqs each result cites
        self.ran: list[ToolOutcome | None] = [None] * n  # finished, then cancelled while paused at 04
        self.finished: list[int | None] = [None] * n  # epoch ms each call's task finished
        self.running: dict[asyncio.Task[ToolOutcome], int] = {}
        self.exclusive_running = False
        self.next = 0
        self.committed = 0
        self.outcome = BatchOutcome()
        self._policy_lock = asyncio.Lock()

    # -- starting ---------------------------------------------------------------------------

    def fill(self) -> None:
        """Start calls in model order while the pool and barrier rules allow."""
        while self.next < len(self.calls) and not self.exclusive_running:
            safe = self.runtime.is_concurrency_safe(self.runnable(self.calls[self.next]))
            if self.running and (not safe or len(self.running) >= self.max_parallel):
                return
            self.start(self.next, exclusive=not safe)
            if not safe:
                return

    def _append_call(self, i: int) -> ToolCallBlock:
        """Append call ``i``'s ``tool/call`` (stage 02) and keep its seq; it is now started."""
        call = self.calls[i]
        tool = self.runtime.registry.get(call.name)
        server, remote = tool.origin if tool is not None and tool.origin else (None, None)
        event = self.session.append(
            ToolCall(turn=self.turn, step=self.step, call_id=call.id, name=call.name, arguments=call.arguments,
                     server=server, tool=remote)
        )
        self.call_seqs[i] = event.seq
        self.next = i + 1
        return call

    def start(self, i: int, *, exclusive: bool) -> None:
        """Append the call's ``tool/call`` (stage 02) and launch its pipeline."""
        self._append_call(i)
        self.exclusive_running = exclusive
        task = asyncio.ensure_future(self._run(i))
        self.running[task] = i

    def runnable(self, call: ToolCallBlock) -> ToolCallBlock:
        """``call`` (as logged) with the arguments it runs with: the model's own."""
        raw = self.run_arguments.get(call.id)
        return call if raw is None or raw == call.arguments else call.model_copy(update={"arguments": raw})

    async def _run(self, i: int) -> ToolOutcome:
        call = self.calls[i]
        try:
            if self.pause_points is not None:
                call = await self._pause_before(i, call)
            run = self.runnable(call) if call is self.calls[i] else call  # an edit runs as edited
            async with self._policy_lock:
                prepared = await self.runtime.prepare(run)
            self.dispatched[i] = prepared.dispatchable
            outcome = await self.runtime.dispatch(prepared)
            if self.pause_points is not None:
                outcome = await self._pause_after(i, call, outcome)
            return outcome
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a runtime bug still answers the call
            return error_outcome(call.id, f"tool runtime failed: {type(exc).__name__}: {exc}", "TOOL_RAISED")

    # -- the debugger's stages 02, 03, 04 ---------------------------------------------------

    async def _pause_before(self, i: int, call: ToolCallBlock) -> ToolCallBlock:
        assert self.pause_points is not None
        seq = self.call_seqs[i]
        for stage in ("02", "03"):
            payload = CallPayload(call_id=call.id, name=call.name, arguments=call.arguments, seq=seq)
            pause = await self.pause_points.pause_point(
                stage, payload=payload, tools=(call.name,), call_id=call.id, seq=seq, name=call.name,
                value=call.arguments, cite=(seq,) if seq is not None else (),
            )
            if pause is not None and pause.edits:
                call = call.model_copy(update={"arguments": pause.value})
                self.edits[i] = (*self.edits[i], *pause.edits)
                if self.on_arguments_edited is not None:
                    self.on_arguments_edited(call.id, call.arguments, tuple(pause.edits))
        return call

    async def _pause_after(self, i: int, call: ToolCallBlock, outcome: ToolOutcome) -> ToolOutcome:
        assert self.pause_points is not None
        seq = self.call_seqs[i]
        payload = ResultPayload(call_id=call.id, name=call.name, seq=seq, result=outcome.text,
                                is_error=outcome.is_error, code=outcome.code)
        try:
            pause = await self.pause_points.pause_point(
                "04", payload=payload, tools=(call.name,), call_id=call.id, seq=seq, name=call.name,
                value=outcome.text, cite=(seq,) if seq is not None else (),
            )
        except asyncio.CancelledError:  # the tool did run: its real output is the result, not CANCELLED
            self.ran[i] = outcome
            raise
        if pause is None or not pause.edits:
            return outcome
        self.edits[i] = (*self.edits[i], *pause.edits)
        message = tool_text(call.id, pause.value, is_error=outcome.is_error)
        return replace(outcome, message=message)

    # -- finishing --------------------------------------------------------------------------

    def collect(self, done: set[asyncio.Task[ToolOutcome]]) -> None:
        """Move finished tasks' outcomes into their slots (cancelled → the abort answer)."""
        finished = now_ms()
        for task in done:
            i = self.running.pop(task)
            self.finished[i] = finished
            if task.cancelled():
                ran = self.ran[i]
                self.slots[i] = ran if ran is not None else self.runtime.aborted(self.calls[i], started=self.dispatched[i])
            else:
                exc = task.exception()
                self.slots[i] = (
                    task.result()
                    if exc is None
                    else error_outcome(self.calls[i].id, f"tool runtime failed: {exc}", "TOOL_RAISED")
                )
        if not self.running:
            self.exclusive_running = False

    def commit_ready(self) -> None:
        """Commit ``tool/result`` for every finished call whose predecessors are committed."""
        while self.committed < len(self.calls) and self.slots[self.committed] is not None:
            i = self.committed
            outcome = self.slots[i]
            seq = self.call_seqs[i]
            assert outcome is not None and seq is not None
            if self.review is not None:
                outcome = self.review(self.calls[i], outcome)
            done_at = self.finished[i]
            event = self.session.append(
                ToolResult(
                    turn=self.turn,
                    step=self.step,
                    message=outcome.message,
                    error=outcome.error,
                    meta=outcome.meta,
                    source_event_seqs=(seq, *self.edits[i]),
                    finished_time=done_at if done_at is not None and done_at < now_ms() else None,
                )
            )
            self.outcome.results.append(event)
            plugin = f"tool:{self.calls[i].name}"
            self.outcome.deferred.extend(
                plugin_text(text, plugin=plugin, form=DEFERRED_FORM) for text in outcome.deferred
            )
            self.outcome.concluded = self.outcome.concluded or outcome.concludes
            self.committed += 1

    # -- driving ----------------------------------------------------------------------------

    async def run(self) -> BatchOutcome:
        if len(self.calls) == 1:
            return await self._run_alone()
        try:
            self.fill()
            while self.running:
                done, _ = await asyncio.wait(set(self.running), return_when=asyncio.FIRST_COMPLETED)
                self.collect(done)
                self.commit_ready()
                self.fill()
            self.commit_ready()
        except asyncio.CancelledError:
            await self.abort()
            raise
        except BaseException:
            await self._drain()
            raise
        return self.outcome

    async def _run_alone(self) -> BatchOutcome:
        """A batch of one call (a step's commonest): awaited in place, with no task and no wait
        set, and answered exactly as :meth:`run` answers it. A cancel reaches the call itself;
        one the tool swallowed still ends the batch (after its real result is committed)."""
        self._append_call(0)
        try:
            outcome = await self._run(0)
        except asyncio.CancelledError:
            self.finished[0] = now_ms()
            ran = self.ran[0]
            self.slots[0] = ran if ran is not None else self.runtime.aborted(self.calls[0], started=self.dispatched[0])
            self.commit_ready()
            raise
        self.finished[0] = now_ms()
        self.slots[0] = outcome
        self.commit_ready()
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise asyncio.CancelledError
        return self.outcome

    async def _drain(self) -> None:
        """Cancel every running call and wait until each has really finished."""
        for task in self.running:
            task.cancel()
        while True:
            pending = [t for t in self.running if not t.done()]
            if not pending:
                break
            try:
                await asyncio.wait(pending)
            except asyncio.CancelledError:
                for task in pending:  # cancelled again while draining: keep cancelling, keep waiting
                    task.cancel()
        self.collect(set(self.running))

    async def abort(self) -> None:
        """Answer every call after a cancellation: running → CANCELLED, unstarted → synthetic pair."""
        await self._drain()
        self.commit_ready()
        for i in range(self.next, len(self.calls)):
            self.start_synthetic(i)
            self.commit_ready()

    def start_synthetic(self, i: int) -> None:
        """A call never started: its ``tool/call`` now, answered ``ABORTED_BEFORE_DISPATCH``."""
        call = self._append_call(i)
        self.slots[i] = self.runtime.aborted(call, started=False)


async def execute_tool_calls(
    session: Session,
    calls: Sequence[ToolCallBlock],
    *,
    turn: int,
    step: int,
    runtime: ToolRuntime,
    max_parallel: int = 10,
    pause_points: PausePoints | None = None,
    on_arguments_edited: ArgumentsEdited | None = None,
    review: Review | None = None,
    run_arguments: Mapping[str, str] | None = None,
) -> BatchOutcome:
    """Run one assistant message's tool calls; see the module docstring for the rules."""
    batch = ToolBatch(session, calls, turn=turn, step=step, runtime=runtime, max_parallel=max_parallel,
                      pause_points=pause_points, on_arguments_edited=on_arguments_edited, review=review,
                      run_arguments=run_arguments)
    return await batch.run()


__all__ = ["ArgumentsEdited", "BatchOutcome", "PausePoints", "ToolBatch", "execute_tool_calls"]
