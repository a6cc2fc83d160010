"""The pages of one session (issue 38 item 1): what ``session/page`` answers, computed from the
whole log where the log is, so a widget holds only a window of it (:mod:`dsh_notebook.wire.pages`).

:class:`SessionPages` indexes a session's stored event lines as they grow, in two parts:

- **the index** (:meth:`SessionPages.extend`, one pass over the parsed lines): each event's type,
  turn (its own, else the turn it falls in) and tool, who cites whom, the frozen requests —
  what the event list, its filters and search, the request diff and the derived messages need;
- **the figures** (:meth:`SessionPages.figures`): ``session_stats`` over the typed events (the
  ``show --stats`` fold) and the span each event starts or ends (the list's durations column),
  recomputed when the log has grown; folded from the typed events alone, so a saved log's can
  come before its index.

Each kind of page is answered by its own module: :mod:`.rows` (rows, facets, export),
:mod:`.stats` (stats, timeline, turn) and :mod:`.requests` (request diff, messages).
Pure and blocking: the host runs it off its loop, one caller at a time per session (``lock``).
The browser's twin over a window that holds the whole session is ``js/src/data/local.ts``;
tests/client/test_pages_parity.py checks both give the same pages on recorded runs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..analysis.stats import SessionStats, session_stats
from ..wire.base import tag
from ..wire.events import AnyEvent, ApprovalAsked, ApprovalDecided

Event = dict[str, Any]
CHUNK = 500
"""Lines parsed (or validated) in one call: each call holds the GIL, a part of a long log briefly
(500: ~1 ms parsed, ~2 ms validated — and the whole faster than in parts of 2,000, whose lists
cost the garbage collector: 100,000 events validated in 0.4 s against 1.2 s, indexed in 0.5 s
against 1.0 s; a widget's first pages wait less for the GIL meanwhile)."""
Models = Callable[[int], Iterable[AnyEvent]]
"""The first ``n`` events of the session as typed events (validated: a bad line raises its coded
error); iterated once (a saved log's are validated a part at a time as the fold reads them)."""


@dataclass
class Figures:
    """``show --stats`` of the first ``count`` events, and the durations column: seq → ms;
    ``approvals``: where each call's approval was asked and decided; ``last_time``: the time of
    the last of those events (the timeline's now); ``cache``: what the pages derive from them (the
    timeline's rows, the sent lines). What the stats, timeline and turn pages read: nothing of
    the index."""

    count: int
    stats: SessionStats
    durations: dict[int, int]
    approvals: dict[str, dict[str, int]]
    last_time: int = 0
    cache: dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionPages:
    """The index of one session's events (see the module text). ``models`` gives the typed events
    the figures are folded from (a live session's own, or a saved log's validated lines)."""

    session_id: str
    models: Models
    lines: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    turns: list[int | None] = field(default_factory=list)
    tools: list[str | None] = field(default_factory=list)
    cited_by: dict[int, list[int]] = field(default_factory=dict)
    frozen: list[int] = field(default_factory=list)
    turn_starts: dict[int, int] = field(default_factory=dict)  # turn -> the seq of its (last) turn/start
    mode: str | None = None  # the permission mode of the last mode/changed (None: none logged)
    lock: threading.RLock = field(default_factory=threading.RLock)
    listings: OrderedDict[tuple[Any, ...], tuple[int, Any]] = field(default_factory=OrderedDict)  # rows.py's cache
    _turn: int | None = None
    _names: dict[str, str] = field(default_factory=dict)
    _by_seq: dict[int, str] = field(default_factory=dict)
    _low: list[str | None] = field(default_factory=list)
    _figures: Figures | None = None
    derived: tuple[int, list[int]] | None = None  # requests.derive's last fold: (through, surface seqs)

    @property
    def count(self) -> int:
        return len(self.events)

    # -- the index --------------------------------------------------------------------------
    def extend(self, lines: Sequence[str]) -> None:
        """Index ``lines``, the stored events that follow the ones indexed (seq order). Parsed a
        part at a time: one ``json.loads`` of a whole long log would hold the GIL for seconds (the
        host's loop, the kernel's comm thread and the first page wait on it)."""
        for at in range(0, len(lines), CHUNK):
            part = lines[at:at + CHUNK]
            parsed: list[Event] = json.loads("[" + ",".join(part) + "]")
            with self.lock:
                for line, ev in zip(part, parsed, strict=True):
                    self._add(line, ev)
            time.sleep(0)  # let the threads waiting for the GIL (the host's loop, the kernel) go first

    def _add(self, line: str, ev: Event) -> None:
        seq = len(self.events)
        kind = tag(ev) or ""
        if kind == "turn/start" and isinstance(ev.get("turn"), int):
            self._turn = ev["turn"]
            self.turn_starts[ev["turn"]] = seq
        own = ev.get("turn")
        name: str | None = None  # the tool an event concerns (query.py annotate)
        if kind == "tool/call":
            name = str(ev.get("name", ""))
            self._names[str(ev.get("callId"))] = name
            self._by_seq[seq] = name
        elif kind.startswith("approval/") and ev.get("name"):
            name = str(ev["name"])
        elif kind.startswith("tool/"):
            message = ev.get("message")
            call = ev.get("callId") or (message.get("toolCallId") if isinstance(message, dict) else None)
            name = self._names.get(str(call)) if call else None
            for s in ev.get("sourceEventSeqs") or ():
                name = name or self._by_seq.get(s)
        elif kind == "request/frozen":
            self.frozen.append(seq)
        elif kind == "mode/changed" and isinstance(ev.get("mode"), str):
            self.mode = ev["mode"]
        for s in ev.get("sourceEventSeqs") or ():
            self.cited_by.setdefault(s, []).append(seq)
        self.lines.append(line)
        self.events.append(ev)
        self.types.append(kind)
        self.turns.append(own if isinstance(own, int) and not isinstance(own, bool) else self._turn)
        self.tools.append(name)
        self._low.append(None)

    def low_text(self, i: int) -> str:
        """The lowercased text free-text terms are looked for in (query.py event_text)."""
        from .query import event_text

        low = self._low[i]
        if low is None:
            low = self._low[i] = event_text(self.events[i]).lower()
        return low

    # -- the figures ------------------------------------------------------------------------
    def figures(self, upto: int | None = None) -> Figures:
        """``show --stats`` and the durations of the first ``upto`` events — by default the events
        indexed so far — cached until the index grows past them. Folded from the typed events
        alone, so a saved log's figures can come before its index (``upto``: its length)."""
        with self.lock:
            n = self.count if upto is None else upto
            if self._figures is not None and self._figures.count >= n:
                return self._figures
        tap = _Tap()
        stats = session_stats(tap.events(self.models(n)))
        figures = Figures(n, stats, durations_by_seq(stats, tap.approvals), tap.approvals, tap.last_time)
        with self.lock:
            if self._figures is None or self._figures.count < n:
                self._figures = figures
            return self._figures

    @property
    def figures_ready(self) -> bool:
        """The figures cover every indexed event."""
        return self._figures is not None and self._figures.count >= self.count


@dataclass
class _Tap:
    """What the figures note of the events as the fold reads them: where each call's approval was
    asked and decided (js/src/model/waterfall.ts approvalSeqs: a later ``approval/asked`` of the
    same call starts its entry again) and the last event's time."""

    approvals: dict[str, dict[str, int]] = field(default_factory=dict)
    last_time: int = 0

    def events(self, events: Iterable[AnyEvent]) -> Iterator[AnyEvent]:
        approvals = self.approvals
        ev = None
        for ev in events:
            if isinstance(ev, ApprovalAsked):
                approvals[ev.call_id] = {"asked": ev.seq}
            elif isinstance(ev, ApprovalDecided):
                approvals.setdefault(ev.call_id, {})["decided"] = ev.seq
            yield ev
        if ev is not None:
            self.last_time = ev.time


def durations_by_seq(stats: SessionStats, approvals: dict[str, dict[str, int]]) -> dict[int, int]:
    """The span each event starts or ends — a request, a tool call, an approval wait, a step, a
    turn (js/src/model/waterfall.ts durationsBySeq: the same puts in the same order)."""
    out: dict[int, int] = {}

    def put(seq: int | None, ms: int | None) -> None:
        if seq is not None and ms is not None:
            out[seq] = ms

    for r in stats.requests:
        put(r.seq, r.duration_ms)
        put(r.result_seq, r.duration_ms)
    for c in stats.tools:
        put(c.seq, c.duration_ms)
        put(c.result_seq, c.duration_ms)
        a = approvals.get(c.call_id)
        if a:
            put(a.get("asked"), c.approval_wait_ms)
            put(a.get("decided"), c.approval_wait_ms)
    for t in stats.turns:
        put(t.seq, None if t.end_time is None else t.duration_ms)
        put(t.end_seq, t.duration_ms)
        for s in t.steps:
            put(s.seq, s.duration_ms)
    return out
