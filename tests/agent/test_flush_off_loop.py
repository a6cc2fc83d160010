"""The durability barrier runs off the host loop (issue 16, item 4): while a flush is stuck on a
slow disk the loop keeps running other work; the request still waits for it, and order holds."""

from __future__ import annotations

import asyncio
import threading

import pytest

from dsh_notebook.agent.durable import PROCESS_FLUSH_SPEED
from dsh_notebook.wire.events import RequestFrozen, TurnEnd

from .fakes import ChunkModel, make_agent, text


async def test_a_stuck_flush_does_not_stop_the_loop_and_the_request_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # storage not measured yet in this process (agent/durable.py: after quick flushes in a row,
    # which earlier tests of this worker made, the next ones run inline)
    monkeypatch.setattr(PROCESS_FLUSH_SPEED, "streak", 0)
    release = threading.Event()
    entered = threading.Event()
    flushed: list[int] = []
    loop_threads: set[int] = set()
    model = ChunkModel(text("done"))
    sent: list[int] = []
    agent = make_agent(model)

    def slow_flush() -> None:  # the disk: the first flush hangs until released
        loop_threads.add(threading.get_ident())
        if not flushed:
            entered.set()
            release.wait(30)
        flushed.append(agent.session.last_seq)

    agent.flush = slow_flush
    model.on_request = lambda _r: sent.append(len(flushed))
    agent.followup("go")
    # this coroutine runs on the agent's loop: getting here at all means the loop is free while
    # the flush is stuck (a flush on the loop would hold it until release, which never comes)
    assert await asyncio.to_thread(entered.wait, 30)
    other = asyncio.get_running_loop().create_task(asyncio.sleep(0, result="served"))
    assert await other == "served" and not release.is_set()
    assert sent == []  # ... and the request is not sent before the log is durable
    release.set()
    await agent.wait_idle()
    assert threading.get_ident() not in loop_threads  # never on the loop's thread
    frozen = next(e.seq for e in agent.session.events if isinstance(e, RequestFrozen))
    assert flushed[0] == frozen and sent == [1]
    assert flushed == sorted(flushed) and flushed[-1] == agent.session.last_seq
    assert isinstance(agent.session.events[-1], TurnEnd)
