"""The segments of a turn's text view (:mod:`.render`) and what shows them: the answer text of a
step (:class:`TextSeg`), one line per tool call (:class:`ToolSeg`: its arguments in one line, its
last phase or its outcome), a notice (:class:`NoteSeg`); a :class:`Sink` shows them (:mod:`.sinks`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol

from ...tools.arguments import display_arguments


@dataclass
class TextSeg:
    key: str  # "turn.step": the live attempt and the committed message of a step share it
    text: str = ""


@dataclass
class ToolSeg:
    call_id: str
    name: str
    arguments: str = ""
    phase: str = "prepare"
    status: str = "start"
    detail: str | None = None
    result: str | None = None
    error: str | None = None
    done: bool = False
    failed: bool = False  # the tool ran and reported a failure (a non-zero exit): ✗, not ✓
    namespace: str | None = None  # python: the names the call added / rebound / deleted
    edited: bool = False  # its arguments were edited at a breakpoint: the line shows what runs
    continued: bool = False  # frozen in a display above, not done there: it goes on below

    def args_line(self) -> str:
        return format_arguments(self.arguments)

    def state_line(self) -> str:
        if self.continued and not self.done:  # a frozen line never claims a state that ended later
            return f"{self._state()} ↓ continued below".lstrip("… ").strip() or "↓ continued below"
        return self._state()

    def _state(self) -> str:
        if self.done:
            mark = "✗" if self.error or self.failed else "✓"
            line = f"{mark} {self.error or self.result or ''}".rstrip()
            return f"{line} · {self.namespace}" if self.namespace else line
        if self.phase == "approval" and self.status == "waiting":
            return "? waiting for approval"
        if self.phase == "approval" and self.status == "deny":
            return "✗ denied"
        if self.phase in ("execute", "progress"):
            return f"… running{': ' + self.detail if self.detail else ''}"
        return "…"


@dataclass
class NoteSeg:
    key: str
    text: str


Segment = TextSeg | ToolSeg | NoteSeg


class Sink(Protocol):
    def show(self, segments: list[Segment]) -> None: ...
    def tick(self) -> None: ...
    def flush(self) -> None: ...
    def split(self, call_id: str | None = None) -> None: ...


def format_arguments(arguments: str, *, width: int = 100) -> str:
    """``{"command": "ls"}`` → ``ls``; several keys → ``k=v, …``; truncated, one line."""
    data = display_arguments(arguments)  # None when too big, too deep or not JSON
    if data is None:
        arguments = arguments[: width * 2]
    if isinstance(data, dict) and len(data) == 1:
        text = str(next(iter(data.values())))
    elif isinstance(data, dict):
        text = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in data.items())
    else:
        text = arguments
    text = text.replace("\r", "").replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"
