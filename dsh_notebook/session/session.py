"""The Core Session (seed 001 L4, seed 000 stages 04–05): the fact layer.

``append`` is the only way in. In order it: stamps a dense ``seq`` and an epoch-ms ``time``;
serialises the event once (rejecting non-lossless JSON); checks provenance and surface rules;
pushes it to the in-memory log (**the commit point**); then calls observers, whose failures are
contained. Durability is not the Session's job: persistence observes commits and flushes on its
own schedule (see :mod:`.persistence`).

The *surface* is the ordered list of surface events that still count; ``derive_messages()``
projects it into model messages incrementally: an append adds one message, so a call costs O(1)
no matter how long the history is, and a replace (rare) rebuilds once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast, overload

from pydantic_core import PydanticSerializationError

from ..errors import ProvenanceError, SessionError
from .events import (
    AnyEvent,
    AssistantMessageEvent,
    RequestFrozen,
    RequestHeader,
    SessionEndSeed,
    SurfaceEnvelope,
    SystemMessageEvent,
    ToolCall,
    ToolResult,
    UserMessageEvent,
)
from .lossless import check_lossless
from .messages import AnyMessage

log = logging.getLogger(__name__)

E = TypeVar("E", bound=AnyEvent)
Observer = Callable[[AnyEvent], None]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class MessageHistory(Sequence[AnyMessage]):
    """An immutable snapshot of the derived messages, with the surface seq of each.

    Creating one is O(1): it shares the Session's lists and remembers their length. The
    Session never mutates an element it has handed out; a replace builds new lists.
    """

    __slots__ = ("_msgs", "_n", "_seqs", "generation")

    def __init__(self, msgs: list[AnyMessage], seqs: list[int], n: int, generation: int) -> None:
        self._msgs, self._seqs, self._n, self.generation = msgs, seqs, n, generation

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> AnyMessage: ...
    @overload
    def __getitem__(self, i: slice) -> list[AnyMessage]: ...
    def __getitem__(self, i: int | slice) -> AnyMessage | list[AnyMessage]:
        if isinstance(i, slice):
            return self._msgs[: self._n][i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._msgs[i]

    def __iter__(self) -> Iterator[AnyMessage]:
        msgs = self._msgs
        for i in range(self._n):
            yield msgs[i]

    def seq_of(self, i: int) -> int:
        """The surface seq the i-th message came from."""
        return self._seqs[i if i >= 0 else i + self._n]

    @property
    def seqs(self) -> list[int]:
        return self._seqs[: self._n]

    def seqs_since(self, other: MessageHistory | None) -> list[int] | None:
        """Seqs added after ``other`` when this history extends it; ``None`` when it does not."""
        if other is None or other._msgs is not self._msgs or other._n > self._n:
            return None
        return self._seqs[other._n : self._n]

    def __repr__(self) -> str:
        return f"<MessageHistory {self._n} messages, generation {self.generation}>"


def _derive(event: AnyEvent) -> AnyMessage | None:
    """The model message a surface event contributes, or ``None`` (empty assistant/system)."""
    if isinstance(event, UserMessageEvent | ToolResult):
        return event.message
    if isinstance(event, AssistantMessageEvent | SystemMessageEvent):
        return event.message if event.message.content else None
    return None


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
        self._lines: list[str] = []
        self._observers: list[Observer] = []
        self._publishing = False
        self.observer_errors: list[BaseException] = []
        self.first_live_seq = 0
        # surface: node seqs in order, plus the derived messages (non-empty nodes only)
        self._nodes: list[int] = []
        self._msgs: list[AnyMessage] = []
        self._msg_seqs: list[int] = []
        self.generation = 0
        # provenance index: tool/call seqs not yet answered, by callId
        self._open_calls: dict[str, list[int]] = {}

    # -- reading ----------------------------------------------------------------------------

    @property
    def events(self) -> Sequence[AnyEvent]:
        return self._events

    def __len__(self) -> int:
        return len(self._events)

    @property
    def last_seq(self) -> int:
        return len(self._events) - 1

    def line(self, seq: int) -> str:
        """The JSON line of event ``seq`` exactly as persisted (serialised once, at append)."""
        return self._lines[seq]

    def derive_messages(self) -> MessageHistory:
        """The model-visible history: user / system / assistant / tool messages of the surface."""
        return MessageHistory(self._msgs, self._msg_seqs, len(self._msgs), self.generation)

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

    def append(self, event: E) -> E:
        """Stamp, validate, commit and publish ``event``; returns the committed event."""
        if self._publishing:
            raise SessionError("append from inside a session observer", code="REENTRANT_APPEND")
        stamped = cast(E, event.model_copy(update={"seq": len(self._events), "time": self._clock()}))
        self._commit(stamped)
        return stamped

    def _commit(self, event: E) -> None:
        seq = len(self._events)
        if event.seq != seq:
            raise SessionError(f"event seq {event.seq} is not the next seq {seq}", code="BAD_SEQ")
        if type(event.time) is not int or event.time < 0:
            raise SessionError(f"event time {event.time!r} is not epoch ms", code="BAD_TIME")
        if isinstance(event, RequestHeader):
            check_lossless(event.config, "$.config")
            check_lossless([t.parameters for t in event.tools], "$.tools")
        elif isinstance(event, RequestFrozen) and event.repairs:
            check_lossless(list(event.repairs), "$.repairs")
        try:
            line = event.model_dump_json(exclude_none=True)
        except (PydanticSerializationError, UnicodeEncodeError, ValueError) as exc:
            raise SessionError(f"payload is not lossless JSON: {exc}", code="NOT_LOSSLESS") from exc
        self._check_provenance(event)
        surface_change = self._plan_surface(event) if isinstance(event, SurfaceEnvelope) else None
        # -- commit point --
        self._events.append(event)
        self._lines.append(line)
        if isinstance(event, ToolCall):
            self._open_calls.setdefault(event.call_id, []).append(seq)
        elif isinstance(event, ToolResult) and event.source_event_seqs:
            self._open_calls[event.message.tool_call_id].remove(event.source_event_seqs[0])
        if surface_change is not None:
            surface_change()
        self._publish(event)

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

    # -- rules ------------------------------------------------------------------------------

    def _check_provenance(self, event: AnyEvent) -> None:
        src = event.source_event_seqs
        if isinstance(event, ToolResult):
            call_id = event.message.tool_call_id
            open_calls = self._open_calls.get(call_id) or []
            if src is None:
                if open_calls:
                    raise ProvenanceError(
                        f"tool/result for {call_id!r} must cite its tool/call seq {open_calls[0]}"
                    )
                return
            if len(src) != 1 or src[0] not in open_calls:
                raise ProvenanceError(
                    f"tool/result for {call_id!r} must cite exactly its open tool/call seq; "
                    f"got {list(src)}, open: {open_calls}"
                )
        if src is None:
            return
        if len(src) == 0:
            raise ProvenanceError("sourceEventSeqs must not be empty when present")
        if len(set(src)) != len(src):
            raise ProvenanceError(f"sourceEventSeqs has duplicates: {list(src)}")
        n = len(self._events)
        for s in src:
            if not 0 <= s < n:
                raise ProvenanceError(f"sourceEventSeqs cites {s}, not an earlier event (< {n})")

    def _plan_surface(self, event: SurfaceEnvelope) -> Callable[[], None]:
        seq = event.seq
        message = _derive(event)  # type: ignore[arg-type]
        op = event.surface_op
        if op is None:

            def do_append() -> None:
                self._nodes.append(seq)
                if message is not None:
                    self._msgs.append(message)
                    self._msg_seqs.append(seq)

            return do_append
        nodes = self._nodes
        try:
            i, j = nodes.index(op.start_seq), nodes.index(op.end_seq)
        except ValueError:
            raise ProvenanceError(
                f"replace {op.start_seq}..{op.end_seq}: both ends must be current surface nodes"
            ) from None
        if i > j:
            raise ProvenanceError(f"replace {op.start_seq}..{op.end_seq}: start comes after end")
        shadowed = nodes[i : j + 1]
        missing = set(shadowed) - set(event.source_event_seqs or ())
        if missing:
            raise ProvenanceError(
                f"replace must cite every shadowed node in sourceEventSeqs; missing {sorted(missing)}"
            )

        def do_replace() -> None:
            self._nodes = nodes[:i] + [seq] + nodes[j + 1 :]
            self._rebuild_messages()

        return do_replace

    def _rebuild_messages(self) -> None:
        msgs: list[AnyMessage] = []
        seqs: list[int] = []
        for s in self._nodes:
            m = _derive(self._events[s])
            if m is not None:
                msgs.append(m)
                seqs.append(s)
        self._msgs, self._msg_seqs = msgs, seqs  # new lists: earlier snapshots stay valid
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
    ) -> Session:
        """Rebuild a Session from logged events with the same checks as live appends.

        With ``mark_seed`` a ``session/end-seed`` is appended (unless the log already ends with
        one) so the boundary between the restored and the live part is itself a fact.
        """
        session = cls(session_id, cwd=cwd, created_at=created_at, clock=clock)
        for event in events:
            session._commit(event)
        if mark_seed and events and not isinstance(events[-1], SessionEndSeed):
            session.append(SessionEndSeed())
        session.first_live_seq = len(session._events)
        return session

    def to_dicts(self) -> list[dict[str, Any]]:
        import json

        return [json.loads(line) for line in self._lines]

    def __repr__(self) -> str:
        return f"<Session {self.id} {len(self._events)} events>"
