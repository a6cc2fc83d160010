"""Where a :class:`~.render.TurnView` is shown.

- :class:`DisplaySink` (a Jupyter kernel: JupyterLab, classic notebook, nbclient, papermill): one
  display output holding Markdown and plain text, updated **in place** through its display id,
  at most every ``interval`` seconds (updates are coalesced; :meth:`flush` forces the last one).
- :class:`TerminalSink` (terminal IPython, or ``%config DshMagics.output = "stream"``): append-only
  text on stdout — tokens as they arrive, one line per tool call start and per result.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any, TextIO

from .render import NoteSeg, Segment, TextSeg, ToolSeg, TurnView


def _code(text: str) -> str:
    """Inline Markdown code that survives backticks in ``text``."""
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_escape(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def tool_markdown(seg: ToolSeg) -> str:
    state = seg.state_line()
    return f"- **{_md_escape(seg.name)}** {_code(seg.args_line())} — {_md_escape(state)}"


def tool_plain(seg: ToolSeg) -> str:
    """The whole tool line (display's text/plain): call and state."""
    return f"  → {seg.name} {seg.args_line()}  [{seg.state_line()}]"


def tool_start_plain(seg: ToolSeg) -> str:
    return f"  → {seg.name} {seg.args_line()}".rstrip()


def tool_state_plain(seg: ToolSeg) -> str:
    return f"    {seg.state_line()}"


def view_markdown(segments: list[Segment]) -> str:
    parts: list[str] = []
    tools: list[str] = []
    for seg in segments:
        if isinstance(seg, ToolSeg):
            tools.append(tool_markdown(seg))
            continue
        if tools:
            parts.append("\n".join(tools))
            tools = []
        if isinstance(seg, TextSeg) and not seg.abandoned and seg.text:
            parts.append(seg.text)
        elif isinstance(seg, NoteSeg):
            parts.append(f"*{_md_escape(seg.text)}*")
    if tools:
        parts.append("\n".join(tools))
    return "\n\n".join(parts) or "*…*"


def view_plain(segments: list[Segment]) -> str:
    lines: list[str] = []
    for seg in segments:
        if isinstance(seg, ToolSeg):
            lines.append(tool_plain(seg))
        elif isinstance(seg, TextSeg) and not seg.abandoned and seg.text:
            lines.append(seg.text)
        elif isinstance(seg, NoteSeg):
            lines.append(f"[{seg.text}]")
    return "\n".join(lines)


class DisplaySink:
    """A display output updated in place; ``changed()`` marks dirty, ``tick()`` publishes."""

    def __init__(self, view: TurnView | None = None, *, interval: float = 0.1) -> None:
        self.view = view
        self.interval = interval
        self._handle: Any = None
        self._dirty = False
        self._last = 0.0
        self.updates = 0

    def bind(self, view: TurnView) -> None:
        self.view = view

    def text(self, seg: TextSeg, delta: str) -> None:
        self._dirty = True

    def tool(self, seg: ToolSeg, new: bool) -> None:
        self._dirty = True

    def note(self, seg: NoteSeg) -> None:
        self._dirty = True

    def retract(self, seg: TextSeg) -> None:
        self._dirty = True

    def tick(self) -> None:
        if self._dirty and time.monotonic() - self._last >= self.interval:
            self.flush()

    def flush(self) -> None:
        if not self._dirty or self.view is None:
            return
        from IPython.display import display

        bundle = {"text/markdown": view_markdown(self.view.segments),
                  "text/plain": view_plain(self.view.segments)}
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
        else:
            self._handle.update(bundle, raw=True)
        self._dirty = False
        self._last = time.monotonic()
        self.updates += 1


class TerminalSink:
    """Append-only text: tokens as they stream, a line per tool call event."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self._mid_line = False

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    def bind(self, view: TurnView) -> None:
        pass

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self._mid_line = not text.endswith("\n")

    def _line(self, text: str) -> None:
        self._write(("\n" if self._mid_line else "") + text + "\n")

    def text(self, seg: TextSeg, delta: str) -> None:
        self._write(delta)

    def tool(self, seg: ToolSeg, new: bool) -> None:
        if new:
            self._line(tool_start_plain(seg))
        if seg.done or (seg.phase == "approval" and seg.status in ("waiting", "deny")):
            self._line(tool_state_plain(seg))

    def note(self, seg: NoteSeg) -> None:
        self._line(f"[{seg.text}]")

    def retract(self, seg: TextSeg) -> None:
        self._line("[that attempt was abandoned; retrying]")

    def tick(self) -> None:
        pass

    def flush(self) -> None:
        if self._mid_line:
            self._write("\n")
