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
