"""``session/follow`` (seed 001 L8, object 37): one session's facts and transient frames, with a cursor.

A :class:`SessionHub` exists per followed session. It observes the Core Session (each committed
event) and receives the Agent's transient frames, and fans both out to its followers, in the
order they happen — everything runs on the host loop, so the snapshot and the registration of a
follower are one atomic step and nothing can fall between them.

The items are the types of :mod:`dsh_notebook.wire.follow` (``snapshot``, ``event``,
``assistant-stream``, ``tool-runtime``, ``status``). Events go out as the session's stored JSON
lines, spliced into the items (never parsed again); a transient frame is serialised once for all
followers. A snapshot's ``live`` part is the :class:`~.run_state.RunStateFold` of the frames so far (the
attempt in flight with its chunks, each call's last tool-runtime frame, pending approvals), so a
client that reconnects mid-stream can rebuild its view. A follower of a saved session that is not
live gets a snapshot from the log (``attached: false``) and stays open; if the session is resumed
later, the hub attaches and the follower receives every event after its snapshot — the
crash-repair closers included. Closing a follow never cancels a run.

A ``turn/end`` reaches a follower only once it is in the log file: the hub holds it (and every
item after it, in order) until a flush of the session (:meth:`SessionHub.durable_flush`, the
flush the Agent runs at every turn end) that began after its commit has finished. A follower
that sees a turn end — a cell's ``wait_turn_end``, the CLI's ``run``, the widget — can read it
on disk, and a snapshot sent meanwhile stops before it, with the live part as it was then (the
turn still running). A flush that failed (``DISK_FULL`` ...) releases it too: a follower never
waits on a disk that refuses (the writer keeps the line queued; the next flush retries it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import HostError
from ..session.session import Session
from ..wire.base import Encoded, to_json
from ..wire.events import AnyEvent, TurnEnd
from ..wire.follow import (
    PendingApproval,
    RunFrame,
    Snapshot,
    event_item,
    snapshot_item,
)
from ..wire.log import SessionHeader
from .gateway import StreamSink
from .run_state import RunStateFold


@dataclass
class Follower:
    sink: StreamSink
    last_seq: int


@dataclass
class ColdLog:
    """A saved log read for a follower while no agent owns it: its header and stored lines."""

    header: SessionHeader
    lines: list[str]


class SessionHub:
    """Fan-out of one session's durable events and transient frames to its followers."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.session: Session | None = None
        self.run_state = RunStateFold()
        self.approvals: Callable[[], list[PendingApproval]] = list
        self.followers: list[Follower] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._gated = False  # durable_flush wraps the session's flush: turn ends wait for it
        # the turn/end events committed and not yet flushed, each with the fold just before it
        self._held: list[tuple[int, RunStateFold]] = []
        self._later: list[tuple[int, Encoded]] = []  # frames after a held turn/end (the seq they follow)

    def durable_flush(self, flush: Callable[[], None]) -> Callable[[], None]:
        """Wrap the session's flush (write + fsync; it runs on the host loop or a worker thread;
        wrap it on the loop): once it has finished, every ``turn/end`` it carried goes out.

        The log's writer observes the session before the hub does (it is attached first), so a
        turn/end the hub holds when a flush begins is queued for that flush (or for one still
        running, which flushes serialise). ``_held`` is only appended to or replaced, on the
        loop, so one read of it here is a consistent list."""
        loop, loop_thread = asyncio.get_running_loop(), threading.get_ident()
        self._gated = True

        def flush_then_release() -> None:
            held = self._held
            carried = held[-1][0] if held else None
            try:
                flush()
            finally:
                if carried is not None:
                    if threading.get_ident() == loop_thread:
                        self._release(carried)
                    else:
                        try:
                            loop.call_soon_threadsafe(self._release, carried)
                        except RuntimeError:  # the loop is closed: the host has shut down
                            pass

        return flush_then_release

    def _release(self, through: int) -> None:
        """The turn ends up to seq ``through`` are in the file: send them, and what followed."""
        self._held = [h for h in self._held if h[0] > through]
        self._pump()

    def _limit(self) -> int:
        """The last seq followers may see: the one before the first held turn/end."""
        assert self.session is not None
        return self._held[0][0] - 1 if self._held else self.session.last_seq

    def visible(self) -> int:
        """How many of the live session's events its followers and pages may see (a held
        turn/end and what follows it come once it is on disk)."""
        return self._limit() + 1

    def _pump(self) -> None:
        """Send every follower the events up to the limit, with the frames between them."""
        if self.session is None:
            return
        limit = self._limit()
        while self._later and self._later[0][0] <= limit:
            seq, encoded = self._later.pop(0)
            for follower in list(self.followers):
                self._catch_up(follower, seq)
                follower.sink.item(encoded)
        for follower in list(self.followers):
            self._catch_up(follower, limit)

    # -- wiring -----------------------------------------------------------------------------
    def attach(self, session: Session, approvals: Callable[[], list[PendingApproval]] | None = None) -> None:
        """The session is live: observe it and bring every follower up to its last seq."""
        self.detach()
        self.session = session
        self._unsubscribe = session.subscribe(self._on_event)
        if approvals is not None:
            self.approvals = approvals
        self._pump()

    def detach(self) -> None:
        self._release(self.session.last_seq if self.session is not None else -1)  # the log is closed
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = None
        self.run_state = RunStateFold()

    def on_frame(self, frame: RunFrame) -> None:
        """A transient frame from the Agent or the tool runtime (host loop only)."""
        self.run_state.apply(frame)
        if self._held and self.session is not None:  # it comes after a turn/end not yet out
            self._later.append((self.session.last_seq, Encoded(to_json(frame))))
        elif self.followers:
            encoded = Encoded(to_json(frame))  # serialised once for every follower
            for follower in list(self.followers):
                follower.sink.item(encoded)

    def _on_event(self, event: AnyEvent) -> None:
        if self._gated and isinstance(event, TurnEnd):
            self._held.append((event.seq, self.run_state.copy()))
        self.run_state.on_event(event)
        if self._held:
            return  # the followers have everything before the held turn/end already
        for follower in list(self.followers):
            self._catch_up(follower, event.seq)

    def _catch_up(self, follower: Follower, upto: int) -> None:
        session = self.session
        assert session is not None
        while follower.last_seq < upto and not follower.sink.closed:
            follower.last_seq += 1
            follower.sink.item(event_item(session.line(follower.last_seq)))

    # -- following --------------------------------------------------------------------------
    def open(self, sink: StreamSink, cursor: int | None, *, cold: ColdLog | None = None,
             window: int | None = None) -> Callable[[], None]:
        """Send the snapshot and register ``sink``. ``cold``: a saved log no agent owns;
        ``window``: send at most the last ``window`` events (the snapshot's ``start`` says where
        they begin; the client reads the rest in pages)."""
        session = self.session
        if session is not None:
            header = SessionHeader.model_construct(id=session.id, cwd=session.cwd, created_at=session.created_at)
            count, attached = self._limit() + 1, True  # a held turn/end comes once it is written
        elif cold is not None:
            header, count, attached = cold.header, len(cold.lines), False
        else:
            raise HostError(f"no session {self.session_id!r}", code="UNKNOWN_SESSION")
        last = count - 1
        start = -1 if cursor is None else cursor
        if start > last or start < -1:
            raise HostError(
                f"cursor {start} is outside the log (last seq {last}); follow without a cursor",
                code="BAD_ARGS",
            )
        begins: int | None = None
        if window is not None and last - start > window:
            begins = start = last - window
        lines = [session.line(i) for i in range(start + 1, count)] if session is not None else cold.lines[start + 1 :]  # type: ignore[union-attr]
        snapshot = Snapshot.model_construct(
            session_id=self.session_id, header=header, cursor=last, start=begins,
            live=self._shown().view(attached, self.approvals() if attached else []),
        )  # fmt: skip
        sink.item(snapshot_item(snapshot, lines))
        follower = Follower(sink, last)
        self.followers.append(follower)

        def close() -> None:
            if follower in self.followers:
                self.followers.remove(follower)

        return close

    def _shown(self) -> RunStateFold:
        """The live state as far as followers may see: before the first held turn/end."""
        return self._held[0][1] if self._held else self.run_state

    def end_all(self) -> None:
        """Host shutdown (every log closed): what was held goes out, then every stream ends."""
        if self.session is not None:
            self._release(self.session.last_seq)
        for follower in list(self.followers):
            follower.sink.end()
        self.followers.clear()
