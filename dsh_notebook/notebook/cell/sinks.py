"""Where a :class:`~.render.TurnView` is shown: each ``show(segments)`` gets the turn's whole view.

- :class:`DisplaySink` (a Jupyter kernel: JupyterLab, classic notebook, nbclient, papermill): one
  display output holding inert HTML (the model's Markdown rendered with nothing that loads: issue
  35 finding 4) and plain text, updated **in place** through its display id,
  at most every ``interval`` seconds (updates are coalesced; :meth:`flush` forces the last one).
  After a question typed on stdin, :meth:`~DisplaySink.split` freezes that display (it ends with
  the call that asked, waiting) and the rest of the turn goes to a new display below the typed
  answer — so each answer stays beside its call, not after the final answer.
- :class:`TerminalSink` (terminal IPython, ``%config DshMagics.output = "stream"``, and the ``run``
  CLI on stderr): append-only text — what is new since the last ``show``: tokens, one line per
  tool call start and per result or approval wait; text that changed under it (an abandoned
  attempt that is retried) is announced and printed again.
"""

from __future__ import annotations

import html
import sys
import time
from dataclasses import replace
from typing import Any, TextIO

from .inert_html import inert_html
from .segments import NoteSeg, Segment, TextSeg, ToolSeg


def tool_html(seg: ToolSeg) -> str:
    """One tool line: name, arguments (as code), state — every part escaped text."""
    edited = " <em>(edited)</em>" if seg.edited else ""
    return (f"<li><strong>{html.escape(seg.name)}</strong> <code>{html.escape(seg.args_line())}</code>{edited}"
            f" — {html.escape(seg.state_line())}</li>")


def tool_plain(seg: ToolSeg) -> str:
    """The whole tool line (display's text/plain): call and state."""
    return f"  → {seg.name} {seg.args_line()}{'  (edited)' if seg.edited else ''}  [{seg.state_line()}]"


def tool_start_plain(seg: ToolSeg) -> str:
    return f"  → {seg.name} {seg.args_line()}".rstrip()


def tool_state_plain(seg: ToolSeg) -> str:
    return f"    {seg.state_line()}"


def segment_key(seg: Segment) -> str:
    """The identity of a segment across renders: a step's text, a tool call, a note."""
    return f"tool:{seg.call_id}" if isinstance(seg, ToolSeg) else f"{type(seg).__name__}:{seg.key}"


def view_html(segments: list[Segment]) -> str:
    """The turn as HTML that loads nothing: the model's Markdown rendered inert
    (:func:`~.inert_html.inert_html`: no image, no raw HTML), tool lines and notes escaped."""
    parts: list[str] = []
    tools: list[str] = []
    for seg in segments:
        if isinstance(seg, ToolSeg):
            tools.append(tool_html(seg))
            continue
        if tools:
            parts.append(f"<ul class=\"dsh-tools\">{''.join(tools)}</ul>")
            tools = []
        if isinstance(seg, TextSeg) and seg.text:
            parts.append(inert_html(seg.text))
        elif isinstance(seg, NoteSeg):
            parts.append(f"<p><em>{html.escape(seg.text)}</em></p>")
    if tools:
        parts.append(f"<ul class=\"dsh-tools\">{''.join(tools)}</ul>")
    return f"<div class=\"dsh-answer\">{''.join(parts) or '<p><em>…</em></p>'}</div>"


def display_bundle(segments: list[Segment]) -> dict[str, str]:
    """What a display output holds: inert ``text/html`` and readable ``text/plain`` — never the
    model's Markdown as ``text/markdown``, which a viewer would render and fetch images from."""
    return {"text/html": view_html(segments), "text/plain": view_plain(segments)}


def view_plain(segments: list[Segment]) -> str:
    lines: list[str] = []
    for seg in segments:
        if isinstance(seg, ToolSeg):
            lines.append(tool_plain(seg))
        elif isinstance(seg, TextSeg) and seg.text:
            lines.append(seg.text)
        elif isinstance(seg, NoteSeg):
            lines.append(f"[{seg.text}]")
    return "\n".join(lines)


class DisplaySink:
    """A display output updated in place; ``show()`` marks dirty, ``tick()`` publishes."""

    def __init__(self, *, interval: float = 0.1) -> None:
        self.interval = interval
        self.segments: list[Segment] = []
        self._handle: Any = None
        self._dirty = False
        self._last = 0.0
        self.updates = 0
        self._frozen: set[str] = set()  # segments shown in displays above (before a stdin answer)
        self.displays = 0

    def show(self, segments: list[Segment]) -> None:
        if segments != self.segments:
            self.segments = segments
            self._dirty = True

    def tick(self) -> None:
        if self._dirty and time.monotonic() - self._last >= self.interval:
            self.flush()

    def split(self, call_id: str | None = None) -> None:
        """Keep the display shown so far as it is (a typed stdin answer follows it in the cell);
        what comes next — the rest of the turn, and the line of the call ``call_id`` that asked,
        with its outcome — goes to a new display below."""
        self.flush()
        if self._handle is None:
            return
        shown = self._visible()
        if any(isinstance(s, ToolSeg) and not s.done for s in shown):  # its last word: "continued below"
            final = [replace(s, continued=True) if isinstance(s, ToolSeg) and not s.done else s for s in shown]
            self._handle.update(display_bundle(final), raw=True)
            self.updates += 1
        keep = f"tool:{call_id}" if call_id else None
        self._frozen.update(k for k in map(segment_key, self.segments) if k != keep)
        self._handle = None
        self._dirty = True
        self._last = 0.0

    def _visible(self) -> list[Segment]:
        return [s for s in self.segments if segment_key(s) not in self._frozen]

    def flush(self) -> None:
        if not self._dirty:
            return
        from IPython.display import display

        shown = self._visible()
        if self._handle is None and not shown:
            return
        bundle = display_bundle(shown)
        if self._handle is None:
            self._handle = display(bundle, raw=True, display_id=True)
            self.displays += 1
        else:
            self._handle.update(bundle, raw=True)
        self._dirty = False
        self._last = time.monotonic()
        self.updates += 1


class TerminalSink:
    """Append-only text: what each ``show`` adds — tokens, a line per tool call event, notes."""

    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out
        self._mid_line = False
        self._texts: dict[str, str] = {}  # text segment key -> text printed
        self._tools: dict[str, set[str]] = {}  # callId -> states printed ("start", "waiting", ...)
        self._notes: set[str] = set()

    @property
    def out(self) -> TextIO:
        return self._out or sys.stdout

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self._mid_line = not text.endswith("\n")

    def _line(self, text: str) -> None:
        self._write(("\n" if self._mid_line else "") + text + "\n")

    def show(self, segments: list[Segment]) -> None:
        for seg in segments:
            if isinstance(seg, TextSeg):
                self._text(seg)
            elif isinstance(seg, ToolSeg):
                self._tool(seg)
            elif seg.key not in self._notes:
                self._notes.add(seg.key)
                self._line(f"[{seg.text}]")

    def _text(self, seg: TextSeg) -> None:
        printed = self._texts.get(seg.key, "")
        if seg.text.startswith(printed):
            self._write(seg.text[len(printed):])
        else:  # the attempt that printed it was abandoned; a retry streams anew
            self._line("[that attempt was abandoned; retrying]")
            self._write(seg.text)
        self._texts[seg.key] = seg.text

    def _tool(self, seg: ToolSeg) -> None:
        shown = self._tools.setdefault(seg.call_id, set())
        start = tool_start_plain(seg)
        if "start" not in shown:
            shown.add("start")
            self._line(start)
        elif start not in shown:  # its arguments were edited at a breakpoint: the call as it runs
            self._line(f"{start}  (edited)")
        shown.add(start)
        state = "done" if seg.done else seg.status if seg.phase == "approval" and seg.status in ("waiting", "deny") else None
        if state is not None and state not in shown:
            shown.add(state)
            self._line(tool_state_plain(seg))

    def tick(self) -> None:
        pass

    def split(self, call_id: str | None = None) -> None:
        """Append-only already: the typed answer is printed where it was asked."""

    def flush(self) -> None:
        if self._mid_line:
            self._write("\n")
