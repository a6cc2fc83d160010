"""The text clients' "waiting for the model · N s" line: shown once an attempt has sent nothing for
half a second (so within the first second), ticking, gone with the first chunk (a fake clock: no
sleeping)."""

from __future__ import annotations

import io
from typing import Any

from dsh_notebook.host.waiting import GRACE_S, PLAIN_EVERY_S, WaitingTicker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def attempt(chunks: int = 0, attempt_id: str = "s/1.1.1") -> dict[str, Any]:
    return {"attemptId": attempt_id, "chunks": chunks, "outcome": None}


def visible(text: str) -> str:
    """What a terminal shows of ``text`` (each ``\\r`` returns to the line's start and overwrites)."""
    lines = []
    for line in text.split("\n"):
        shown: list[str] = []
        for part in line.split("\r"):
            shown[: len(part)] = list(part)
        lines.append("".join(shown))
    return "\n".join(lines)


def test_in_place_the_line_appears_in_the_first_second_ticks_and_is_wiped_by_the_first_chunk() -> None:
    out, clock = io.StringIO(), Clock()
    flushed: list[int] = []
    ticker = WaitingTicker(out, in_place=True, clock=clock, before_show=lambda: flushed.append(1))
    ticker.tick(attempt())
    assert out.getvalue() == ""  # an answer that comes at once shows no line
    clock.now += GRACE_S
    ticker.tick(attempt())
    assert out.getvalue() == "\rwaiting for the model · 0 s" and flushed == [1]
    for second in (1, 2, 42):
        clock.now = 100.0 + second + 0.2
        ticker.tick(attempt())
        ticker.tick(attempt())  # the same second again: written once
    assert out.getvalue().count("waiting for the model") == 4 and flushed == [1]  # before the first only
    assert visible(out.getvalue()) == "waiting for the model · 42 s"
    ticker.tick(attempt(chunks=1))
    assert visible(out.getvalue()).strip() == "" and out.getvalue().endswith("\r")  # wiped, at the line's start
    assert "\x1b" not in out.getvalue()  # no terminal escape: a notebook's stream reads it too


def test_appended_the_first_line_at_the_grace_then_one_per_interval_and_a_new_attempt_starts_again() -> None:
    out, clock = io.StringIO(), Clock()
    ticker = WaitingTicker(out, in_place=False, clock=clock)
    ticker.tick(attempt())
    clock.now += GRACE_S
    ticker.tick(attempt())
    for k in range(1, 3 * PLAIN_EVERY_S + 1):
        clock.now = 100.0 + k
        ticker.tick(attempt())
    assert out.getvalue().splitlines() == [f"waiting for the model · {n * PLAIN_EVERY_S} s" for n in (0, 1, 2, 3)]
    ticker.tick(None)  # the attempt ended (an error, a retry)
    ticker.tick(attempt(attempt_id="s/1.1.2"))
    clock.now += PLAIN_EVERY_S
    ticker.tick(attempt(attempt_id="s/1.1.2"))
    assert out.getvalue().splitlines()[-1] == f"waiting for the model · {PLAIN_EVERY_S} s"
    assert "\x1b" not in out.getvalue() and "\r" not in out.getvalue()


def test_a_terminal_is_in_place_and_a_pipe_is_not() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert WaitingTicker(Tty()).in_place and not WaitingTicker(io.StringIO()).in_place
