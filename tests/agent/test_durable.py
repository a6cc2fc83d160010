"""The log's flush from the host loop (agent/durable.py): on a worker thread, inline only while
flushes are quick, back to the thread after a slow one; what a flush raises reaches the caller."""

from __future__ import annotations

import asyncio
import threading

import pytest

from dsh_notebook.agent.durable import FAST_FLUSH_S, FAST_STREAK, Flusher, FlushSpeed
from dsh_notebook.errors import LogWriteError


class Clock:
    """A flush's measured duration is what the test says (``step`` per flush)."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def __call__(self) -> float:
        self.reads += 1
        if self.reads % 2 == 0:  # the second read of a flush: it took ``step``
            self.now += self.step
        return self.now


def recording() -> tuple[list[int], Flusher, Clock]:
    threads: list[int] = []
    clock = Clock(FAST_FLUSH_S / 10)
    return threads, Flusher(lambda: threads.append(threading.get_ident()), clock=clock), clock


async def test_quick_flushes_move_onto_the_loop_and_a_slow_one_sends_the_next_back_to_a_thread() -> None:
    threads, flusher, clock = recording()
    loop_thread = threading.get_ident()
    for _ in range(FAST_STREAK + 3):
        await flusher()
    assert all(t != loop_thread for t in threads[:FAST_STREAK])  # measured first, on a worker thread
    assert threads[FAST_STREAK:] == [loop_thread] * 3
    assert (flusher.threaded, flusher.inline) == (FAST_STREAK, 3)
    clock.step = FAST_FLUSH_S * 20  # the disk turned slow: this flush (inline) is the only one that holds the loop
    await flusher()
    assert threads[-1] == loop_thread
    clock.step = FAST_FLUSH_S / 10
    await flusher()
    assert threads[-1] != loop_thread and not flusher.runs_inline


async def test_a_slow_flush_never_holds_the_loop() -> None:
    """A flush that blocks until the loop itself releases it: it can only finish off the loop."""
    released, loop = threading.Event(), asyncio.get_running_loop()
    started = asyncio.Event()
    ran_on: list[int] = []

    def slow() -> None:
        ran_on.append(threading.get_ident())
        loop.call_soon_threadsafe(started.set)
        assert released.wait(30), "the loop never ran while the flush waited"

    flusher = Flusher(slow)
    task = loop.create_task(flusher())
    await started.wait()  # the flush is running, and this loop still turns
    released.set()
    await task
    assert ran_on[0] != threading.get_ident()  # a first flush is measured on a worker thread


async def test_what_a_flush_raises_reaches_the_caller_inline_and_threaded() -> None:
    calls = 0

    def failing() -> None:
        nonlocal calls
        calls += 1
        if calls > FAST_STREAK:
            raise LogWriteError("disk full", code="DISK_FULL")

    flusher = Flusher(failing, clock=Clock(FAST_FLUSH_S / 10))
    for _ in range(FAST_STREAK):
        await flusher()
    assert flusher.runs_inline
    with pytest.raises(LogWriteError):
        await flusher()  # inline
    flusher.speed.streak = 0
    with pytest.raises(LogWriteError):
        await flusher()  # threaded


async def test_flushers_sharing_a_speed_start_where_the_last_one_left() -> None:
    """A new session's agent on the same storage (one speed per process): its first flush runs
    inline when the earlier agent's were quick, and a slow one sends both back to the thread."""
    loop_thread = threading.get_ident()
    speed, ran_on = FlushSpeed(), []
    clock = Clock(FAST_FLUSH_S / 10)
    first = Flusher(lambda: ran_on.append(threading.get_ident()), clock=clock, speed=speed)
    for _ in range(FAST_STREAK):
        await first()
    second = Flusher(lambda: ran_on.append(threading.get_ident()), clock=clock, speed=speed)
    await second()
    assert ran_on[-1] == loop_thread and (second.inline, second.threaded) == (1, 0)
    clock.step = FAST_FLUSH_S * 20
    await second()  # slow, inline: the last one that holds the loop
    clock.step = FAST_FLUSH_S / 10
    await first()
    assert ran_on[-1] != loop_thread and not second.runs_inline
