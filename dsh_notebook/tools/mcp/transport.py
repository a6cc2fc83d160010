"""Small pieces between the SDK and :mod:`.client`: the read-stream relay that notices a server
going away, paginated ``tools/list``, progress callbacks, and readable failure reasons."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from ...errors import redact


def progress_fn(sink: Callable[[str], None] | None) -> Any:
    """The server's ``notifications/progress`` for a call → the tool's live progress frames."""
    if sink is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        sink(f"{done} {message}" if message else done)

    return on_progress


def closed(exc: Any) -> bool:
    from mcp.types import CONNECTION_CLOSED

    return getattr(getattr(exc, "error", None), "code", None) == CONNECTION_CLOSED


async def list_tools(session: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(100):  # pagination, bounded
        from mcp.types import PaginatedRequestParams

        result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


@contextlib.asynccontextmanager
async def relay(read: Any) -> AsyncIterator[tuple[Any, asyncio.Event]]:
    """Forward the transport's read stream; ``gone`` is set when it ends (the server went away)."""
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)
    gone = asyncio.Event()

    async def pump() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            gone.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            yield receive, gone
        finally:
            tg.cancel_scope.cancel()


def reason(exc: BaseException) -> str:
    """A one-line reason from whatever the SDK raised (unwrapping exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"cannot start: command not found ({exc.filename or exc})"
    text = str(exc) or type(exc).__name__
    return redact(f"{type(exc).__name__}: {text}")[:400]


if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup
