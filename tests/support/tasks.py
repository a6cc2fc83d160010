"""Asyncio helpers for tests."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel(task: asyncio.Future[Any]) -> bool:
    """Cancel ``task``, wait until it has ended, and say whether it ended cancelled (``False`` when
    it swallowed the cancellation and returned; an exception it raised instead propagates)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return task.cancelled()


class LoopTurns:
    """Counts the turns of the running loop while open (a task that counts one and yields, again
    and again): whether, and how often, the code awaited inside let other work run::

        async with LoopTurns() as turns:
            await work()
        assert turns.count > 0
    """

    def __init__(self) -> None:
        self.count = 0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)

    async def __aenter__(self) -> LoopTurns:
        self._task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            await cancel(self._task)
