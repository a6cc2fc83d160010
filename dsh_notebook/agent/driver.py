"""The Agent's driver task: one asyncio task per busy spell that runs turns while there is work.

:class:`AgentDriver` is the part of :class:`~.agent.Agent` that owns the tasks: ``_wake``
starts the driver (or asks a running one to look again), each turn runs as its own task
(:func:`.turn.run_turn`) so that :meth:`cancel` can stop exactly the running turn, and the log is
made durable (:meth:`durable`, off the loop where a flush is slow).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from ..errors import UserError
from ..wire.control import AgentStatus
from .durable import PROCESS_FLUSH_SPEED, Flusher
from .steps import AgentParts
from .turn import run_turn

log = logging.getLogger(__name__)


class AgentDriver:
    """The driver half of the Agent (host-loop thread only)."""

    status: AgentStatus
    flush: Any
    inbox: Any

    def init_driver(self) -> None:
        self.status = "idle"
        self._told: AgentStatus = "idle"  # the status last said to the followers and listeners
        self.current_turn: int | None = None
        self.current_step: int | None = None
        self.cancel_cause: str | None = None
        self._driver: asyncio.Task[None] | None = None
        self._turn_task: asyncio.Task[None] | None = None
        self._wake_requested = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.flusher: Flusher | None = None

    def set_status(self, status: AgentStatus, *, announce: bool = True) -> None:
        raise NotImplementedError

    def _wake(self) -> None:
        if self._driver is not None and not self._driver.done():
            self._wake_requested = True
            return
        loop = asyncio.get_running_loop()
        self._idle.clear()
        self.set_status("running")
        self._driver = loop.create_task(self._drive(), name=f"dsh-agent:{self._agent().session.id}")

    def _agent(self) -> AgentParts:
        return self  # type: ignore[return-value]  # the Agent (agent.py checks it is AgentParts)

    async def _drive(self) -> None:
        try:
            first = True
            while first or self.more_work():
                first, self._wake_requested = False, False
                task = asyncio.get_running_loop().create_task(run_turn(self._agent()))
                self._turn_task = task
                try:
                    await asyncio.wait({task})
                except asyncio.CancelledError:
                    task.cancel()
                    await asyncio.wait({task})
                    raise
        finally:
            self._turn_task = None
            self.current_turn = self.current_step = None
            self.set_status("idle")
            self._idle.set()

    def more_work(self) -> bool:
        """Whether the driver starts another turn when this one ends."""
        return bool(self.inbox.next_turn or (self._wake_requested and self.inbox.next_step))

    async def cancel(self, cause: str = "user", *, keep_inbox: bool = False) -> bool:
        """Abort the running turn (every call answered; ``turn/end`` aborted). ``False`` if idle."""
        if not keep_inbox:
            self.inbox.clear()
        task = self._turn_task
        if task is None or task.done():
            return False
        if self.cancel_cause is None:
            self.cancel_cause = cause  # the first cause wins
        task.cancel()
        await asyncio.wait({task})
        return True

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def outside_turn(self, body: Callable[[], Coroutine[Any, Any, None]], name: str) -> asyncio.Task[None]:
        """Run ``body`` as this agent's turn task although the agent does not drive it (an external
        agent's call, issue 41): it starts once no turn runs, prompts submitted meanwhile queue
        until it ends (then the driver starts them), and :meth:`cancel` (``%dsh stop``) cancels it
        as it cancels a turn. Returns the task (``body`` logs its own ``turn/start`` … ``turn/end``)."""
        while not self._idle.is_set():
            await self._idle.wait()
        # idle and no driver: take the driver's place (no await between the check and here)
        self._idle.clear()
        self.set_status("running")
        task = asyncio.get_running_loop().create_task(body(), name=name)
        self._driver = self._turn_task = task
        task.add_done_callback(self._outside_done)
        return task

    def _outside_done(self, task: asyncio.Task[None]) -> None:
        if self._turn_task is task:
            self._turn_task = None
        if self._driver is task:
            self._driver = None
        self.current_turn = self.current_step = None
        self.set_status("idle")
        self._idle.set()
        if self.inbox.next_turn or self.inbox.next_step:  # prompts that queued meanwhile
            self._wake()

    async def stop_driver(self) -> None:
        """Cancel any running turn (cause ``shutdown``) and the driver itself."""
        await self.cancel("shutdown", keep_inbox=True)
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()
            await asyncio.wait({self._driver})

    async def wait_turn_over(self) -> None:
        """Wait until no turn runs; ``TURN_RUNNING`` while one is still at work."""
        task = self._turn_task
        if task is not None and not task.done():
            if self.current_turn is not None:
                raise UserError("a turn is running; compact after it ends (or stop it first)", code="TURN_RUNNING")
            await asyncio.wait({task})  # its turn/end is committed; only the last flush is left
        await self.wait_idle()  # a turn that just ended: its driver is finishing

    async def durable(self) -> None:
        """Make the log durable (write + fsync): on a worker thread, so that the host loop never
        waits on a disk, or inline while flushes are quicker than the hand-off (:mod:`.durable`;
        the speed measured by this process's earlier agents counts)."""
        if self.flush is None:
            return
        flusher = self.flusher
        if flusher is None or flusher.flush is not self.flush:
            flusher = self.flusher = Flusher(self.flush, speed=PROCESS_FLUSH_SPEED)
        await flusher()

    async def flush_quietly(self, where: str) -> None:
        """A durability point that must not fail what waits on it (a debugger pause, an approval
        wait): a failed flush is logged, and the loop's next flush reports it as the turn's error."""
        try:
            await self.durable()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("flushing the log at %s failed: %s", where, exc)


__all__ = ["AgentDriver"]
