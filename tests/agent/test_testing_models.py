"""dsh_notebook.testing's model fakes as the tests use them: a reply held mid-stream until another
thread sets an event (a Host's loop runs in its own thread), and released in order; a reply
streamed as an async iterator makes it; the bare function model of the loop benchmark; a scripted
model's server window."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from dsh_notebook.models.base import BlockEnd, Finish, ModelRequest, StreamChunk, TextDelta
from dsh_notebook.testing import CannedModel, FunctionModel, HoldModel, hold_text, text_chunks
from dsh_notebook.wire.messages import TextBlock, user_text
from tests.support.tasks import LoopTurns, cancel


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
    assert await cancel(task)


async def test_a_hold_model_holds_every_request_until_released() -> None:
    hold = HoldModel(words=2)
    threading.Thread(target=hold.release.set).start()
    chunks = [c async for c in hold.stream(_request())]
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["held ", "w0", " w1"]
    assert hold.provider == "hold" and len(hold.requests) == 1


async def test_an_async_iterator_reply_streams_as_it_yields() -> None:
    made: list[StreamChunk] = []

    async def live(text: str) -> AsyncIterator[StreamChunk]:
        for c in text_chunks(text, pieces=len(text), usage=False):  # block start, a delta a character, …
            made.append(c)
            yield c

    model = FunctionModel(lambda _r: live("012"))
    seen: list[tuple[str, int]] = []
    async for c in model.stream(_request()):
        if isinstance(c, TextDelta):
            seen.append((c.text, len(made)))  # made as it is sent, not before
    assert seen == [("0", 2), ("1", 3), ("2", 4)] and len(model.requests) == 1
    scripted = [c async for c in CannedModel(live("0")).stream(_request())]
    assert [c.text for c in scripted if isinstance(c, TextDelta)] == ["0"] and isinstance(scripted[-1], Finish)


async def _loop_turns_while_streaming(model: FunctionModel) -> int:
    async with LoopTurns() as turns:
        stream = model.stream(_request())
        await anext(stream)  # the first chunk
        before = turns.count
        rest = [c async for c in stream]
    assert isinstance(rest[-1], Finish)
    return turns.count - before


async def test_a_bare_function_model_keeps_no_requests_and_streams_without_turning_the_loop() -> None:
    bare = FunctionModel(lambda _r: text_chunks("a b c d", pieces=4), record=False, pause=False)
    assert await _loop_turns_while_streaming(bare) == 0 and bare.requests == []
    usual = FunctionModel(lambda _r: text_chunks("a b c d", pieces=4))
    assert await _loop_turns_while_streaming(usual) > 0 and len(usual.requests) == 1


async def test_a_script_model_reports_its_window_as_its_server_would() -> None:
    told, silent = CannedModel(window=3000), CannedModel()
    assert await told.server_window() == 3000 and await silent.server_window() is None
    assert (told.window_asked, silent.window_asked) == (1, 1)
