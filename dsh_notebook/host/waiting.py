"""The "waiting for the model · 3 s" line of the text clients (issue 20 item 5, issue 39 item 8).

While a model attempt is in flight and has sent no chunk yet (a local server processing a long
prompt on CPU can take minutes; ``local:smollm2``'s first request takes 7–17 s), a person must
see that something is happening. The line appears once the attempt has waited :data:`GRACE_S`
(an attempt that answers at once — the scripted model, a warm server — shows none), so within
the first second, and then ticks:

- **in place** (``in_place``: a terminal, ``jupyter console``, terminal IPython, a cell's stream):
  one line rewritten every second with ``\\r`` and wiped with spaces when the first chunk arrives
  (no terminal escape: a notebook's stream output reads ``\\r`` too, and keeps only what follows);
- **appended** (a pipe, a log file): the first line at the grace, then one every
  :data:`PLAIN_EVERY_S` seconds.

The client model already knows all it needs — the live attempt (``assistant-stream`` start) and
its chunk count — so no frame is added; a cell's display (:class:`~dsh_notebook.notebook.cell.live_view.LiveTurnView`)
shows the same from the same state.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

GRACE_S = 0.5
PLAIN_EVERY_S = 10
TEXT = "waiting for the model · {seconds} s"


def waiting_seconds(attempt: Any | None, since: float | None, now: float) -> int | None:
    """Whole seconds a live attempt has waited for its first chunk once past the grace; ``None``
    when no attempt waits (none, a chunk arrived, or it ended) or the grace has not passed."""
    if attempt is None or attempt["chunks"] != 0 or attempt.get("outcome") is not None or since is None:
        return None
    waited = now - since
    return int(waited) if waited >= GRACE_S else None


class WaitingTicker:
    """Call :meth:`tick` with the client model's live attempt as often as convenient (a few times
    a second); :meth:`clear` before anything else is written to ``out`` by another hand.

    ``out``: the stream (``None``: ``sys.stdout`` as it is at each write — a kernel swaps it);
    ``in_place``: rewrite one line (default: ``out`` is a terminal); ``before_show``: called once
    before a line appears (e.g. to end a half-written line of the turn's own text)."""

    def __init__(self, out: TextIO | None = None, *, in_place: bool | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 before_show: Callable[[], None] | None = None) -> None:
        self._out, self.clock, self.before_show = out, clock, before_show
        self.in_place = self._isatty() if in_place is None else in_place
        self._attempt: str | None = None
        self._since: float | None = None
        self._shown: int | None = None  # the seconds (in place) or the interval (appended) shown last
        self._width = 0  # the length of the line shown in place (0: none shown)

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    def _isatty(self) -> bool:
        try:
            return bool(self.out.isatty())
        except (AttributeError, ValueError):
            return False

    def tick(self, attempt: Any | None) -> None:
        if attempt is None or attempt["chunks"] != 0 or attempt.get("outcome") is not None:
            self.clear()
            self._attempt = self._since = None
            return
        if attempt["attemptId"] != self._attempt:
            self.clear()
            self._attempt, self._since, self._shown = attempt["attemptId"], self.clock(), None
        seconds = waiting_seconds(attempt, self._since, self.clock())
        if seconds is None:
            return
        if self.in_place:
            if seconds != self._shown:
                self._show(TEXT.format(seconds=seconds), in_place=True)
                self._shown = seconds
        elif self._shown is None or seconds // PLAIN_EVERY_S != self._shown:
            self._shown = seconds // PLAIN_EVERY_S
            self._show(TEXT.format(seconds=self._shown * PLAIN_EVERY_S), in_place=False)

    def _show(self, text: str, *, in_place: bool) -> None:
        if self.before_show is not None and not self._width:
            self.before_show()
        if in_place:
            pad = " " * max(0, self._width - len(text))
            self._write(f"\r{text}{pad}")
            self._width = len(text)
        else:
            self.out.write(text + "\n")
        self.out.flush()

    def _write(self, text: str) -> None:
        """The line's own ``\\r`` rewrites: past a stream that shows control characters visibly
        (the CLI's guard, ``write_raw``), since this text is the ticker's, not a model's."""
        getattr(self.out, "write_raw", self.out.write)(text)

    def clear(self) -> None:
        """Wipe the line shown in place (the cursor back at its start)."""
        if self._width:
            self._write("\r" + " " * self._width + "\r")
            self.out.flush()
            self._width = 0


__all__ = ["GRACE_S", "PLAIN_EVERY_S", "TEXT", "WaitingTicker", "waiting_seconds"]
