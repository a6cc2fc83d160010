"""The Core Session (seed 001 L4, seed 000 stages 04–05): the fact layer.

``append`` is the only way in. In order it: stamps a dense ``seq`` and an epoch-ms ``time``
(never earlier than the previous event's); checks and freezes JSON payloads and serialises the
event once (rejecting non-lossless JSON: NaN, ±inf, -0, lone surrogates); checks provenance and
surface rules (:mod:`.rules`); pushes it to the in-memory log (**the commit point**); then calls
observers, whose failures are contained. An append from inside an observer is refused
(``REENTRANT_APPEND``). Durability is not the Session's job: persistence observes commits and
flushes on its own schedule (see :mod:`.persistence`).

The *surface* is the ordered list of surface events that still count; ``derive_messages()``
projects it into model messages incrementally: an append adds one message, so a call costs O(1)
no matter how long the history is, and a replace (rare) rebuilds once.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

from pydantic import JsonValue
from pydantic_core import PydanticSerializationError

from ..errors import SessionError
from ..wire.base import to_json
from ..wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    ContextCompacted,
    RequestHeader,
    SessionEndSeed,
    SurfaceEventBase,
    SystemMessageEvent,
    ToolCall,
    ToolResult,
    UserMessageEvent,
)
from ..wire.messages import AnyMessage
from .history import MessageHistory, message_chars
from .rules import check_envelope, check_provenance, check_replace, freeze_payload

__all__ = ["MessageHistory", "Observer", "Session", "now_ms"]

log = logging.getLogger(__name__)

E = TypeVar("E", bound=AnyEvent)
_SURFACE: frozenset[type] = frozenset(
    {UserMessageEvent, SystemMessageEvent, AssistantMessageEvent, ToolResult}
)
_FREE_JSON: frozenset[type] = frozenset({RequestHeader})
Observer = Callable[[AnyEvent], None]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def _derive(event: AnyEvent) -> AnyMessage | None:
    """The model message a surface event contributes, or ``None`` (empty assistant/system)."""
    if isinstance(event, UserMessageEvent | ToolResult):
        return event.message
    if isinstance(event, AssistantMessageEvent | SystemMessageEvent):
        return event.message if event.message.content else None
    return None



@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic GC for a burst of long-lived allocations — only when that is nobody
    else's business.

    Reading or restoring a log allocates many long-lived objects and no garbage, so the
    collector's repeated scans are pure cost (a third of a 100k-event resume). But ``gc`` is
    process-wide: toggling it from a worker thread (the Host resumes off its loop) would change it
    under every other thread and could re-enable a collector someone else disabled. So it is
    paused only in a process whose only thread is doing the work (``show``, ``run --session``, a
    fresh resume), and otherwise left alone."""
    sole = threading.current_thread() is threading.main_thread() and threading.active_count() == 1
    if not (sole and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()

class _ReadOnly(Sequence[AnyEvent]):
    """A read-only view of the Session's event list (no copy; no mutating methods)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[AnyEvent]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __iter__(self) -> Iterator[AnyEvent]:
        return iter(self._items)

    def __repr__(self) -> str:
        return f"<events: {len(self._items)}>"


class Session:
    """An append-only, event-sourced session log with an incrementally derived surface."""

    def __init__(
        self,
        session_id: str,
        *,
        cwd: str = "",
        created_at: int | None = None,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.created_at = created_at if created_at is not None else clock()
        self._clock = clock
        self._events: list[AnyEvent] = []
        self._lines: list[str | None] = []  # None: a restored event, serialised on demand
        self._unserialised = 0  # how many of them are still None
        self._observers: list[Observer] = []
        self._publishing = False
        self.observer_errors: list[BaseException] = []
        self.first_live_seq = 0
        # surface: node seqs in order, plus the derived messages (non-empty nodes only)
        self._nodes: list[int] = []
        self._msgs: list[AnyMessage] = []
        self._msg_seqs: list[int] = []
        self._msg_chars: list[int] = [0]  # running message_chars totals of _msgs (MessageHistory.chars)
        self.generation = 0
        # provenance index: tool/call seqs not yet answered, by callId
        self._open_calls: dict[str, list[int]] = {}
        # the last assistant/message with the provider's usage (not interrupted), and the last event
        # that reshaped the surface (a replace or context/compacted): the prompt-size estimate's anchors
        self.last_usage_seq: int | None = None
        self.last_reshape_seq: int | None = None

    # -- reading ----------------------------------------------------------------------------

    @property
    def events(self) -> Sequence[AnyEvent]:
        """The log, read-only (a live view: it grows as events are appended)."""
        return _ReadOnly(self._events)

    def __len__(self) -> int:
        return len(self._events)

    @property
    def last_seq(self) -> int:
        return len(self._events) - 1

    def line(self, seq: int) -> str:
        """The JSON line of event ``seq`` as persisted (serialised once, at append; for a
        restored event, on first use — identical to the stored line when we wrote it)."""
        line = self._lines[seq]
        if line is None:
            line = self._lines[seq] = to_json(self._events[seq])
            self._unserialised -= 1
        return line

    @property
    def all_serialised(self) -> bool:
        """Whether every event has its stored line already (:meth:`line` will not serialise)."""
        return self._unserialised <= 0

    def derive_messages(self) -> MessageHistory:
        """The model-visible history: user / system / assistant / tool messages of the surface."""
        return MessageHistory(self._msgs, self._msg_seqs, len(self._msgs), self.generation, self._msg_chars)

    @property
    def surface(self) -> list[int]:
        """The seqs of the current surface nodes, in order."""
        return list(self._nodes)

    def open_tool_calls(self) -> dict[str, list[int]]:
        """``tool/call`` seqs that have no ``tool/result`` yet, by call id."""
        return {k: list(v) for k, v in self._open_calls.items() if v}

    # -- observing --------------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(event)`` after each commit. Returns a function that unsubscribes."""
        self._observers.append(observer)

        def unsubscribe() -> None:
            if observer in self._observers:
                self._observers.remove(observer)

        return unsubscribe

    # -- appending --------------------------------------------------------------------------

    def append(self, event: E, *, time: int | None = None) -> E:
        """Stamp, validate, commit and publish ``event``; returns the committed event.

        ``time`` overrides the clock (crash repair reuses the last event's time); the stamped
        time is never earlier than the previous event's.
        """
        if self._publishing:
            raise SessionError("append from inside a session observer", code="REENTRANT_APPEND")
        stamp = self._clock() if time is None else time
        if self._events and stamp < self._events[-1].time:
            stamp = self._events[-1].time
        if event.seq == -1 and event.time == 0:  # fresh, never stamped: stamped in place (a copy
            object.__setattr__(event, "seq", len(self._events))  # costs a fifth of a commit)
            object.__setattr__(event, "time", stamp)
            return self._commit(event)
        return self._commit(cast(E, event.model_copy(update={"seq": len(self._events), "time": stamp})))

    def _commit(self, event: E, line: str | None = None, *, restoring: bool = False) -> E:
        seq = len(self._events)
        t = type(event)
        if event.seq != seq or type(event.time) is not int or event.time < 0:
            check_envelope(event, seq)  # raises with the reason
        if t in _FREE_JSON:
            event = cast(E, freeze_payload(event))
        if line is None and not restoring:
            try:
                line = to_json(event)
            except (PydanticSerializationError, UnicodeEncodeError, ValueError) as exc:
                raise SessionError(
                    f"payload is not lossless JSON: {exc}", code="NOT_LOSSLESS"
                ) from exc
        if t is ToolResult or event.source_event_seqs is not None:
            check_provenance(event, seq, self._open_calls, self._events)
        surface_change = self._plan_surface(event) if t in _SURFACE else None  # type: ignore[arg-type]
        # -- commit point --
        self._events.append(event)
        self._lines.append(line)
        if t is ToolCall:
            self._open_calls.setdefault(cast(ToolCall, event).call_id, []).append(seq)
        elif t is ToolResult:
            self._close_call(event)  # type: ignore[arg-type]
        if surface_change is not None:
            surface_change()
            if cast(SurfaceEventBase, event).surface_op is not None:
                self.last_reshape_seq = seq
            elif t is AssistantMessageEvent:
                done = cast(AssistantMessageEvent, event)
                if done.usage is not None and not done.interrupted:
                    self.last_usage_seq = seq
        elif t is ContextCompacted:
            self.last_reshape_seq = seq
        if self._observers:
            self._publish(event)
        return event

    def _close_call(self, event: ToolResult) -> None:
        if event.surface_op is None and event.source_event_seqs:
            call_id = event.message.tool_call_id
            open_seqs = self._open_calls[call_id]
            open_seqs.remove(event.source_event_seqs[0])
            if not open_seqs:
                del self._open_calls[call_id]

    def _publish(self, event: AnyEvent) -> None:
        if not self._observers:
            return
        self._publishing = True
        try:
            for observer in list(self._observers):
                try:
                    observer(event)
                except Exception as exc:  # contained: an observer never un-commits a fact
                    self.observer_errors.append(exc)
                    log.exception("session observer failed on seq %s", event.seq)
        finally:
            self._publishing = False

    # -- surface ----------------------------------------------------------------------------

    def _plan_surface(self, event: SurfaceEventBase) -> Callable[[], None]:
        seq = event.seq
        message = _derive(event)  # type: ignore[arg-type]
        if event.surface_op is None:

            def do_append() -> None:
                self._nodes.append(seq)
                if message is not None:
                    self._msgs.append(message)
                    self._msg_seqs.append(seq)
                    chars = self._msg_chars
                    if len(chars) == len(self._msgs):  # totals complete so far: keep them so
                        chars.append(chars[-1] + message_chars(message))

            return do_append
        nodes = self._nodes
        i, j = check_replace(event, nodes, self._events)

        def do_replace() -> None:
            self._nodes = nodes[:i] + [seq] + nodes[j + 1 :]
            self._rebuild_messages()

        return do_replace

    def _rebuild_messages(self) -> None:
        msgs: list[AnyMessage] = []
        seqs: list[int] = []
        chars = [0]
        for s in self._nodes:
            m = _derive(self._events[s])
            if m is not None:
                msgs.append(m)
                seqs.append(s)
                chars.append(chars[-1] + message_chars(m))
        self._msgs, self._msg_seqs = msgs, seqs  # new lists: earlier snapshots stay valid
        self._msg_chars = chars
        self.generation += 1

    # -- restoring --------------------------------------------------------------------------

    @classmethod
    def restore(
        cls,
        session_id: str,
        events: Sequence[AnyEvent],
        *,
        cwd: str = "",
        created_at: int | None = None,
        mark_seed: bool = True,
        clock: Callable[[], int] = now_ms,
        lines: Sequence[str] | None = None,
    ) -> Session:
        """Rebuild a Session from logged events with the same checks as live appends.

        Restored events are not serialised again (``lines``, if given, are kept as their
        persisted form; otherwise :meth:`line` serialises on demand). Losslessness still holds:
        they were parsed from JSON, whose parser refuses lone surrogates, and NaN/inf/-0 can
        only sit in the free-form payloads, which are checked for every event as on append.

        With ``mark_seed`` a ``session/end-seed`` is appended (unless the log already ends with
        one) so the boundary between the restored and the live part is itself a fact; without
        it the caller appends closers first and then the seed (see :mod:`.store`).
        """
        if lines is not None and len(lines) != len(events):
            raise SessionError("restore: lines and events differ in length", code="BAD_RESTORE")
        session = cls(session_id, cwd=cwd, created_at=created_at, clock=clock)
        with collector_paused():  # a burst of long-lived allocations and no garbage
            for k, event in enumerate(events):
                session._commit(event, None if lines is None else lines[k], restoring=True)
        session._unserialised = session._lines.count(None)
        if mark_seed:
            session.mark_seed()
        session.first_live_seq = len(session._events)
        return session

    def mark_seed(self) -> SessionEndSeed | None:
        """Append ``session/end-seed`` unless the log is empty or already ends with one."""
        if not self._events or isinstance(self._events[-1], SessionEndSeed):
            self.first_live_seq = len(self._events)
            return None
        seed = self.append(SessionEndSeed(), time=self._events[-1].time)
        self.first_live_seq = len(self._events)
        return seed

    def to_dicts(self) -> list[dict[str, JsonValue]]:
        return [json.loads(self.line(k)) for k in range(len(self._events))]

    def __repr__(self) -> str:
        return f"<Session {self.id} {len(self._events)} events>"
