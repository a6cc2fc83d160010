"""``run``'s "waiting for the model · N s" line: shown while an attempt has sent nothing, ticking,
gone with the first chunk (a fake clock: no sleeping)."""

from __future__ import annotations

import io
from typing import Any

from dsh_notebook.host.waiting import PLAIN_EVERY_S, WaitingTicker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def attempt(chunks: int = 0, attempt_id: str = "s/1.1.1") -> dict[str, Any]:
    return {"attemptId": attempt_id, "chunks": chunks, "outcome": None}


def test_on_a_terminal_the_line_ticks_in_place_and_is_cleared_by_the_first_chunk() -> None:
    out, clock = io.StringIO(), Clock()
    ticker = WaitingTicker(out, tty=True, clock=clock)
    ticker.tick(attempt())
    assert out.getvalue() == ""  # under a second: nothing yet
    for second in (1, 2, 42):
        clock.now = 100.0 + second + 0.2
        ticker.tick(attempt())
        ticker.tick(attempt())  # the same second again: written once
    assert out.getvalue().count("waiting for the model") == 3
    assert out.getvalue().endswith("\r\x1b[Kwaiting for the model · 42 s")
    ticker.tick(attempt(chunks=1))
    assert out.getvalue().endswith("\r\x1b[K")  # cleared before the answer is printed


def test_in_a_pipe_one_line_per_interval_and_a_new_attempt_starts_again() -> None:
    out, clock = io.StringIO(), Clock()
    ticker = WaitingTicker(out, tty=False, clock=clock)
    ticker.tick(attempt())
    for k in range(1, 3 * PLAIN_EVERY_S + 1):
        clock.now = 100.0 + k
        ticker.tick(attempt())
    assert out.getvalue().splitlines() == [f"waiting for the model · {n * PLAIN_EVERY_S} s" for n in (1, 2, 3)]
    ticker.tick(None)  # the attempt ended (an error, a retry)
    ticker.tick(attempt(attempt_id="s/1.1.2"))
    clock.now += PLAIN_EVERY_S
    ticker.tick(attempt(attempt_id="s/1.1.2"))
    assert out.getvalue().splitlines()[-1] == f"waiting for the model · {PLAIN_EVERY_S} s"
    assert "\x1b" not in out.getvalue()
