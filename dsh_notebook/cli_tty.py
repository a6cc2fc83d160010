"""The terminal edge of ``python -m dsh_notebook run``: safe output, approvals asked on the TTY,
and SIGTERM / SIGHUP handled like Ctrl-C.

- :func:`printable` neutralises terminal control sequences in text the CLI prints (model text,
  tool output, reasons, file names): ESC becomes a visible ``␛``, every other C0 control and DEL a
  visible picture, a C1 control ``\\u0085``, so a clipboard write (OSC 52), a title change or a
  clear screen never reaches the terminal; the bidirectional overrides and isolates (``U+202E``
  RIGHT-TO-LEFT OVERRIDE …) and invisible characters (zero-width space, word joiner, BOM, tag
  characters, line and paragraph separators) become visible ``\\u202e`` escapes, so a file name
  or an answer cannot show text in another order than it is (issue 35). ``\\n`` and ``\\t`` are
  kept. Each escape is also a JSON string escape of the same character: JSON output stays valid
  and means the same.
- :func:`guard_output` puts :class:`PrintableStream` on stdout and stderr for a whole command.
- :class:`TtyApprovals` answers the host's approval asks (modes ``default``, ``accept-edits``,
  ``plan``) from the waiting thread: a ``[y/N]`` prompt on ``/dev/tty``, else on stdin when it
  is a terminal; ``exit_plan_mode`` shows the plan and asks ``[a]ccept-edits / [d]efault /
  [k]eep planning`` (then a line of feedback); without a terminal every ask is denied with a
  note saying why and what to use instead.
- :func:`terminate_as_interrupt` makes SIGTERM / SIGHUP raise ``KeyboardInterrupt`` in the main
  thread, so ``run`` cancels the turn through the controller (aborted, every call answered,
  log flushed) exactly as for Ctrl-C, and exits non-zero.
"""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:  # the terminal guard is imported by every command: nothing heavy at import
    from .client.follow import FollowHandle

__all__ = ["NO_TTY", "RAW_OUTPUT", "PrintableStream", "TtyApprovals", "guard_output", "printable", "terminate_as_interrupt"]

NO_TTY = ("no terminal to ask on, so it was denied (run in a terminal, allow the call with --rules, or choose a mode: "
          "--mode accept-edits runs workspace edits, --mode dont-ask denies without asking, --approve auto runs "
          "everything)")

_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 (but \n, \t), DEL, C1
    "\u00ad\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\u3164"
    "\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f]"  # bidi controls, invisible and format characters
)


def _picture(match: re.Match[str]) -> str:
    c = ord(match.group())
    if c == 0x1B:
        return "␛"
    if c < 0x20:
        return chr(0x2400 + c)  # the Unicode control pictures: ␇ ␈ ␍ ...
    if c == 0x7F:
        return "␡"
    if c > 0xFFFF:  # tag characters: as a surrogate pair, JSON's form
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"  # C1 controls (CSI 0x9b …), bidi overrides (RLO 202e …), zero-width characters


def printable(text: str) -> str:
    """``text`` with every terminal control, bidi override and invisible character made visible
    (``\\n`` and ``\\t`` kept)."""
    return _CONTROL.sub(_picture, text) if _CONTROL.search(text) else text


class PrintableStream:
    """A text stream that writes through :func:`printable` (progress on stderr stays safe); any
    other attribute is the wrapped stream's (``isatty``, ``encoding``, ``fileno`` …)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, text: str) -> int:
        return self.out.write(printable(text))

    def write_raw(self, text: str) -> int:
        """Text the product composed itself from fixed words and numbers (the waiting line's
        ``\\r`` rewrite), never model, tool or file text: written as it is."""
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)


RAW_OUTPUT = frozenset({"serve", "mcp-bridge"})
"""Commands whose stdout is a protocol, written as it is."""


def guard_output(command: str) -> None:
    """Everything ``command`` prints — on stdout and stderr — goes through :func:`printable`
    (issue 35: ``show``, ``sessions`` … printed a right-to-left override in a file name raw)."""
    if command in RAW_OUTPUT:
        return
    if not isinstance(sys.stdout, PrintableStream):
        sys.stdout = cast(TextIO, PrintableStream(sys.stdout))
    if not isinstance(sys.stderr, PrintableStream):
        sys.stderr = cast(TextIO, PrintableStream(sys.stderr))


class _Terminal:
    """Where to ask: ``/dev/tty`` (the controlling terminal) or a terminal stdin; else none."""

    def __init__(self) -> None:
        self.stream: TextIO | None = None
        self.out: TextIO = sys.stderr
        try:
            self.stream = open("/dev/tty", "r+", encoding="utf-8", errors="replace")  # noqa: SIM115
            self.out = self.stream
        except OSError:
            if sys.stdin is not None and sys.stdin.isatty():
                self.stream = sys.stdin

    def ask(self, question: str) -> str | None:
        if self.stream is None:
            return None
        self.out.write(question)
        self.out.flush()
        line = self.stream.readline()
        return line if line else None

    def close(self) -> None:
        if self.stream is not None and self.stream is not sys.stdin:
            self.stream.close()


class TtyApprovals:
    """Asks each approval the followed session waits for, once; answers with ``session/approve``."""

    def __init__(self, handle: FollowHandle, answer: Callable[..., Any], note: TextIO) -> None:
        self.handle, self.answer, self.note = handle, answer, note
        self._asked: set[str] = set()
        self._terminal: _Terminal | None = None

    def __call__(self) -> None:
        """The wait's idle hook (the waiting thread): ask what is new."""
        with self.handle.cond:
            waiting = {cid: a for cid, a in self.handle.model.approvals.items() if cid not in self._asked}
            calls = {cid: self._arguments(cid, plan=a.get("name") == "exit_plan_mode", reason=a.get("reason"))
                     for cid, a in waiting.items()}
        for call_id, ask in waiting.items():
            self._asked.add(call_id)
            name = printable(str(ask.get("name") or "tool"))
            if self._terminal is None:
                self._terminal = _Terminal()
            if ask.get("name") == "exit_plan_mode":
                self._plan(call_id, calls[call_id])
                continue
            reply = self._terminal.ask(f"dsh: allow {name} {printable(calls[call_id])} [y/N] ")
            if reply is None:
                self.note.write(f"  approval for {name}: {NO_TTY}\n")
                decision = "deny"
            else:
                decision = "allow" if reply.strip().lower() in ("y", "yes") else "deny"
            self.answer(call_id, decision)

    def _plan(self, call_id: str, plan: str) -> None:
        """``exit_plan_mode``: the plan, then which mode the work continues in, or feedback."""
        assert self._terminal is not None
        from .tools.plan import PLAN_CHOICES, parse_plan_answer

        reply = self._terminal.ask(f"dsh: the agent's plan:\n{printable(plan)}\n{PLAN_CHOICES}\n> ")
        if reply is None:
            self.note.write(f"  approval for the plan: {NO_TTY}\n")
        decision, mode, feedback = parse_plan_answer(reply or "")
        self.answer(call_id, decision, **({"mode": mode} if mode else {"feedback": feedback} if feedback else {}))

    def _arguments(self, call_id: str, *, plan: bool = False, reason: str | None = None) -> str:
        """The plan, or the call as the prompt shows it, then ``?`` and why it is asked."""
        from .tools.plan import plan_text
        from .tools.rules import ask_reason
        from .tools.visible import approval_text
        from .wire.events import ToolCall

        for event in reversed(self.handle.model.events):
            if isinstance(event, ToolCall) and event.call_id == call_id:
                if plan:
                    return plan_text(event.arguments)
                return f"{approval_text(event.name, event.arguments)}?{ask_reason(event.name, event.arguments, reason)}"
        return "" if plan else "?"

    def close(self) -> None:
        if self._terminal is not None:
            self._terminal.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def terminate_as_interrupt() -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` (main thread only); the list
    yielded receives the signal numbers seen, so the caller can pick its exit code."""
    seen: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        seen.append(signum)
        _interrupt(signum, frame)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or not this platform
            pass
    try:
        yield seen
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
