"""Masking text that arrives in pieces (model deltas) with the same result however it was cut."""

from __future__ import annotations

import re

from .core import REDACTOR, Redactor
from .shapes import OPEN_SHAPE as _OPEN_SHAPE

_WS = "\t\n\f\r "  # the only characters a stream is cut after
_WS_RUN = re.compile(r"[\t\n\f\r ]")


class StreamRedactor:
    """Masks secrets in text that arrives in pieces (model deltas), with the same result however
    the text was cut.

    The text is emitted up to a *safe cut*: a point right after whitespace where no secret can
    span (not after ``Bearer``/``api_key:``, not inside a known value that holds whitespace), each
    piece redacted whole. What follows the last safe cut — the word being written, at most
    :attr:`window` characters — waits for the next delta; :meth:`flush` releases it at the end of
    the block. Past :attr:`window` characters without a safe cut the text is cut at the window
    (a point fixed by the text itself), so memory stays bounded and the output deterministic.
    """

    window = 16384

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        self.redactor = redactor
        self.pending = ""
        self._checked = 0  # cut candidates before this index of `pending` are decided
        self._last = 0  # the latest cut point (safe or forced) in `pending`
        self._forced: list[int] = []  # forced cut points in `pending` (always split there)
        self._before = ""  # the end of the text already emitted (a cut's safety may look back)
        if redactor is REDACTOR:
            redactor.refresh_from_env()  # secrets known only by their variable's name, too

    @staticmethod
    def _safe(buf: str, p: int, spaced: tuple[str, ...], final: bool) -> bool | None:
        """Is a cut at ``p`` (``buf[p-1]`` is whitespace) safe? ``None``: not known yet."""
        if _OPEN_SHAPE.search(buf, max(0, p - 48), p):
            return False
        for v in spaced:
            if p + len(v) - 1 > len(buf) and not final:
                return None
            if buf.find(v, max(0, p - len(v)), p + len(v) - 1) >= 0:
                return False
        return True

    def _backward(self, buf: str) -> int:
        """The last safe cut of ``buf`` after ``_checked`` (0: none yet), read from the end — when
        less than a window follows the latest cut, no forced cut can fall in ``buf``."""
        spaced, k, undecided = self.redactor._snap.spaced, len(buf), None
        ctx, off = self._before + buf, len(self._before)
        while True:
            k = max(buf.rfind(c, self._checked, k) for c in _WS)
            if k < 0:
                break
            verdict = self._safe(ctx, off + k + 1, spaced, False)
            if verdict is None:
                undecided = k
            elif verdict:
                self._last = self._checked = k + 1
                return k + 1
        self._checked = undecided if undecided is not None else len(buf)
        return 0

    def _advance(self, buf: str, final: bool) -> int:
        """Decide the cut candidates of ``buf`` from ``_checked`` on; the index to emit up to."""
        if not final and len(buf) - self._last < self.window:
            return self._backward(buf)
        spaced, window = self.redactor._snap.spaced, self.window
        ctx, off = self._before + buf, len(self._before)
        emit_to, last, stopped = 0, self._last, False
        for m in _WS_RUN.finditer(buf, self._checked):
            p = m.end()
            while p > last + window:
                last += window
                self._forced.append(last)
                emit_to = last
            verdict = self._safe(ctx, off + p, spaced, final)
            if verdict is None:
                self._checked, stopped = m.start(), True
                break
            if verdict:
                last = emit_to = p
        if not stopped:
            self._checked = len(buf)
            while len(buf) >= last + window:
                last += window
                self._forced.append(last)
                emit_to = last
        self._last = last
        return len(buf) if final else emit_to

    def _emit(self, buf: str, upto: int) -> str:
        cuts = [c for c in self._forced if c < upto]
        pieces = [buf[a:b] for a, b in zip([0, *cuts], [*cuts, upto], strict=True)]
        self._forced = [c - upto for c in self._forced if c > upto]
        keep = 48 + max((len(v) for v in self.redactor._snap.spaced), default=0)
        self._before = (self._before + buf[:upto])[-keep:]
        self._checked, self._last = max(0, self._checked - upto), max(0, self._last - upto)
        return "".join(self.redactor.redact(piece) for piece in pieces)

    def feed(self, text: str) -> str:
        buf = self.pending + text
        upto = self._advance(buf, final=False)
        out = self._emit(buf, upto) if upto else ""
        self.pending = buf[upto:]
        return out

    def flush(self) -> str:
        buf = self.pending
        if not buf:
            out = ""
        elif not self._forced and len(buf) - self._last < self.window:
            out = self.redactor.redact(buf)  # no cut falls in it: what _emit would make of it, whole
        else:
            out = self._emit(buf, self._advance(buf, final=True))
        self.pending, self._checked, self._last, self._forced, self._before = "", 0, 0, [], ""
        return out


__all__ = ["StreamRedactor"]
