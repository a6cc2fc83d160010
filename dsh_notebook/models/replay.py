"""The replay model: streams the assistant messages of a saved session log, one per request.

``ReplayModel(path_or_events)`` reads a JSONL log (header line, then events — DESIGN §4) or takes
a list of events (objects or dicts) and answers the n-th ``stream()`` call with the n-th committed
``assistant/message``: ``BlockStart``, deltas, ``BlockEnd`` per block, the recorded usage, and
``Finish`` (``tool-calls`` when the message has tool calls, else ``stop``). When the event kept its
compact stream (``stream`` runs) the recorded deltas are replayed as they came — and with
``timing=True`` with the recorded gaps (scaled by ``speed``, each capped at ``max_gap`` seconds);
otherwise text is split into ``pieces`` deltas. Past the last message a ``ModelError``
(``REPLAY_EXHAUSTED``) says the log has no more replies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from ..errors import LogFormatError, ModelError, UserError
from ..session.logfile import read_regular
from ..wire.base import tag
from ..wire.events import AnyEvent, AssistantMessageEvent, EventAdapter, StreamRun, Usage
from ..wire.messages import AssistantMessage, TextBlock, ToolCallBlock
from .base import (
    BlockEnd,
    BlockStart,
    Finish,
    ModelAdapter,
    ModelRequest,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    UsageChunk,
)


def _split(text: str, pieces: int) -> list[str]:
    if pieces <= 1 or len(text) <= 1:
        return [text]
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _items(source: str | Path | Iterable[Any]) -> list[Any]:
    """The lines of a log file (parsed JSON) or the items of an event list."""
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.exists():
            raise UserError(f"replay log not found: {path}", code="LOG_NOT_FOUND")
        data = read_regular(path)  # a directory or a FIFO is refused, never opened blocking
        if data is None:
            raise UserError(f"cannot replay {path}: not a readable regular file (a directory or a FIFO?)",
                            code="LOG_NOT_FOUND")
        try:
            lines = data.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise LogFormatError(f"cannot replay {path}: not a session log (not UTF-8 text)",
                                 code="LOG_CORRUPT") from None
        items: list[Any] = []
        for n, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except ValueError:
                if n == len(lines) - 1:
                    break  # a torn last line: dropped, as the log loader does
                raise LogFormatError(f"{path}:{n + 1}: not JSON", code="LOG_CORRUPT") from None
    else:
        items = list(source)
    return items


def load_events(source: str | Path | Iterable[Any]) -> list[AnyEvent]:
    """Every event of a log file or an event list (objects or dicts), in order."""
    out: list[AnyEvent] = []
    for item in _items(source):
        if isinstance(item, dict):
            if tag(item) == "session":
                continue  # the header line
            item = EventAdapter.validate_python(item)
        out.append(item)
    return out


def load_assistant_events(source: str | Path | Iterable[Any]) -> list[AssistantMessageEvent]:
    """The ``assistant/message`` events of a log file or an event list, in order."""
    out = []
    for item in _items(source):
        if isinstance(item, dict):
            if tag(item) != "assistant/message":
                continue
            item = EventAdapter.validate_python(item)
        if isinstance(item, AssistantMessageEvent):
            out.append(item)
    return out


class ReplayModel(ModelAdapter):
    """``ModelAdapter`` that replays recorded assistant messages turn by turn."""

    provider = "replay"

    def __init__(
        self,
        source: str | Path | Sequence[Any],
        *,
        timing: bool = False,
        speed: float = 1.0,
        max_gap: float = 2.0,
        pieces: int = 3,
    ) -> None:
        self.events = load_assistant_events(source)
        self.timing = timing
        self.speed = speed
        self.max_gap = max_gap
        self.pieces = pieces
        self.position = 0

    @property
    def remaining(self) -> int:
        return len(self.events) - self.position

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        if self.position >= len(self.events):
            raise ModelError(
                f"the replayed log has no more assistant messages ({len(self.events)} replayed)",
                code="REPLAY_EXHAUSTED",
            )
        event = self.events[self.position]
        self.position += 1
        for delay, chunk in self.chunks(event.message, event.stream, event.usage):
            if delay > 0:
                await asyncio.sleep(delay)
            yield chunk

    def chunks(
        self, message: AssistantMessage, runs: Sequence[StreamRun] | None, usage: Usage | None
    ) -> list[tuple[float, StreamChunk]]:
        """The timed chunks of one message: ``(seconds to wait before it, chunk)``."""
        out: list[tuple[float, StreamChunk]] = []
        by_index = self._runs(message, runs or ())
        for index, block in enumerate(message.content):
            if isinstance(block, ToolCallBlock):
                out.append((0.0, BlockStart(index, "tool-call", block.id, block.name)))
                parts, gaps = by_index.get(index) or (_split(block.arguments, self.pieces), [])
                for n, part in enumerate(parts):
                    delta = ToolCallDelta(index, block.id, part, block.name if n == 0 else None)
                    out.append((gaps[n] if n < len(gaps) else 0.0, delta))
                continue
            kind: Literal["text", "reasoning"] = "text" if isinstance(block, TextBlock) else "reasoning"
            out.append((0.0, BlockStart(index, kind)))
            parts, gaps = by_index.get(index) or (_split(block.text, self.pieces), [])
            for n, part in enumerate(parts):
                chunk = TextDelta(index, part) if kind == "text" else ReasoningDelta(index, part)
                out.append((gaps[n] if n < len(gaps) else 0.0, chunk))
        out += [(0.0, BlockEnd(i, b)) for i, b in enumerate(message.content)]
        if usage is not None:
            out.append((0.0, UsageChunk(usage)))
        out.append((0.0, Finish("tool-calls" if message.tool_calls else "stop")))
        return out

    def _runs(
        self, message: AssistantMessage, runs: Sequence[StreamRun]
    ) -> dict[int, tuple[list[str], list[float]]]:
        """Recorded deltas per block index, kept only where they rebuild the block exactly."""
        found: dict[int, tuple[list[str], list[float]]] = {}
        previous: int | None = None
        for run in runs:
            parts, gaps = found.setdefault(run.index, ([], []))
            first = 0.0 if previous is None else (run.time0 - previous) / 1000
            run_gaps = [first, *(dt / 1000 for dt in run.dt)]
            parts.extend(run.parts)
            gaps.extend(run_gaps[: len(run.parts)])
            previous = run.time0 + sum(run.dt)
        kept = {}
        for index, (parts, gaps) in found.items():
            if index >= len(message.content):
                continue
            block = message.content[index]
            whole = block.arguments if isinstance(block, ToolCallBlock) else block.text
            if "".join(parts) == whole and parts:
                scale = [min(self.max_gap, max(0.0, g) / self.speed) for g in gaps]
                kept[index] = (parts, scale if self.timing else [])
        return kept

