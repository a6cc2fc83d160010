"""dsh_notebook.testing's model fakes as the tests use them: a reply held mid-stream until another
thread sets an event (a Host's loop runs in its own thread), and released in order."""

from __future__ import annotations

import asyncio
import threading

from dsh_notebook.models.base import BlockEnd, Finish, ModelRequest, TextDelta
from dsh_notebook.testing import FunctionModel, hold_text
from dsh_notebook.wire.messages import TextBlock, user_text


def _request() -> ModelRequest:
    return ModelRequest(provider="fake", model="m", messages=(user_text("hi"),))


async def test_a_held_reply_waits_for_an_event_set_by_another_thread() -> None:
    release = threading.Event()
    model = FunctionModel(lambda _r: hold_text(release, "held w0 w1"))
    seen: list[object] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for chunk in model.stream(_request()):
            seen.append(chunk)
            if isinstance(chunk, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    for _ in range(50):  # the loop turns; the held stream sends nothing while the event is unset
        await asyncio.sleep(0)
    assert [c.text for c in seen if isinstance(c, TextDelta)] == ["held "]
    threading.Thread(target=release.set).start()
    await task
    assert [c.text for c in seen if isinstance(c, TextDelta)] == ["held ", "w0", " w1"]
    end = next(c for c in seen if isinstance(c, BlockEnd))
    assert isinstance(end.block, TextBlock) and end.block.text == "held w0 w1"
    assert isinstance(seen[-1], Finish) and len(model.requests) == 1


async def test_a_held_reply_is_cancellable() -> None:
    model = FunctionModel(lambda _r: hold_text(threading.Event(), "held w0"))
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in model.stream(_request()):
            started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert task.cancelled()
