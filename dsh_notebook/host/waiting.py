"""``run``'s "waiting for the model · 42 s" line (issue 20 item 5).

While a model attempt is in flight and has sent no chunk yet (a local server processing a long
prompt on CPU can take minutes), ``run`` shows how long it has waited: on a terminal one line
updated in place every second and cleared when the first chunk arrives; otherwise (a pipe, a log)
one line every :data:`PLAIN_EVERY_S` seconds. The client model already knows all it needs — the
live attempt (``assistant-stream`` start) and its chunk count — so no frame is added; a cell or a
widget can show the same from the same state.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO

PLAIN_EVERY_S = 10


class WaitingTicker:
    """Call :meth:`tick` with the client model's live attempt as often as convenient."""

    def __init__(self, out: TextIO, *, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.out, self.clock = out, clock
        self.tty = out.isatty() if tty is None else tty
        self._attempt: str | None = None
        self._since = 0.0
        self._shown = 0  # the last whole second (tty) or interval (plain) shown
        self._line = False

    def tick(self, attempt: Any | None) -> None:
        if attempt is None or attempt["chunks"] != 0 or attempt.get("outcome") is not None:
            self._clear()
            self._attempt = None
            return
        if attempt["attemptId"] != self._attempt:
            self._clear()
            self._attempt, self._since, self._shown = attempt["attemptId"], self.clock(), 0
        seconds = int(self.clock() - self._since)
        if self.tty:
            if seconds >= 1 and seconds != self._shown:
                self.out.write(f"\r\x1b[Kwaiting for the model · {seconds} s")
                self.out.flush()
                self._shown, self._line = seconds, True
        elif seconds >= PLAIN_EVERY_S and seconds // PLAIN_EVERY_S != self._shown:
            self._shown = seconds // PLAIN_EVERY_S
            self.out.write(f"waiting for the model · {self._shown * PLAIN_EVERY_S} s\n")
            self.out.flush()

    def _clear(self) -> None:
        if self._line:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self._line = False
