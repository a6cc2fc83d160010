"""The read-only controller: ``session/info`` and ``session/follow`` for a log no agent owns.

A saved session — on disk in the Host's store, or a log file a widget replays — is served by a
:class:`ReadOnlyController` through the same Descriptors and Gateway as a live one: ``info``
describes it from its log (every :class:`~dsh_notebook.wire.endpoints.SessionInfo` field, with
``live: false``), ``follow`` sends the snapshot of its stored lines (``live.attached`` false) and
stays open. Every other endpoint is refused with ``READ_ONLY`` (resume the session to run it). A
log that cannot be read answers each call with its own coded error.

A log read without validating its events (:func:`~dsh_notebook.session.saved.read_saved_fast`,
a widget's replay) is sent in parts: a first snapshot of :data:`FIRST_PART` events, then further
snapshots of :data:`PART` events, each validated off the loop just before it goes (the client
folds consecutive snapshots of one session as one log, cursor by cursor). The first rows are on
screen while the rest is still checked; a bad line ends the stream with its ``LOG_CORRUPT`` error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..errors import DshError, HostError
from ..session.saved import SavedLog, read_saved_fast
from ..wire.endpoints import FollowArgs, SessionInfo, SessionRef
from ..wire.follow import Snapshot, snapshot_item
from ..wire.pages import Page, PageArgs
from .follow import ColdLog, SessionHub
from .gateway import GatewayInvocation, StreamSink
from .pages import PageSources

FIRST_PART = 2_000
"""Events in the first snapshot of a log sent in parts (enough for the first screens)."""
PART = 10_000
"""Events in each later snapshot part (the browser folds each in one task: a loop widget replaying
100,000 events takes ten of them, none long)."""

Reader = Callable[[str], Awaitable[SavedLog]]
"""Session id → its saved log (raises a coded error when there is none)."""


class ReadOnlyController:
    """The ``sessionController`` Service of sessions no live agent owns."""

    def __init__(self, read: Reader, hub_for: Callable[[str], SessionHub], *, default_model: str) -> None:
        self.read = read
        self.hub_for = hub_for
        self.default_model = default_model
        self.sources = PageSources()

    @classmethod
    def of_log(cls, log: SavedLog | DshError, *, default_model: str = "script:auto") -> ReadOnlyController:
        """Serve one log (or answer every call with the error that kept it from being read)."""
        hubs: dict[str, SessionHub] = {}

        async def read(session_id: str) -> SavedLog:
            if isinstance(log, DshError):
                raise log
            if session_id != log.session_id:
                raise HostError(f"no session {session_id!r} here (this replays {log.session_id})", code="UNKNOWN_SESSION")
            return log

        return cls(read, lambda sid: hubs.setdefault(sid, SessionHub(sid)), default_model=default_model)

    async def info(self, args: SessionRef, inv: GatewayInvocation) -> SessionInfo:
        inv.note("served", "read-only, from the saved log")
        return (await self.read(args.session_id)).info(self.default_model)

    async def page(self, args: PageArgs, inv: GatewayInvocation) -> Page:
        """A page of the saved log's views (:mod:`.pages`)."""
        saved = await self.read(args.session_id)
        inv.note("page", args.query.kind)
        return await self.sources.saved(saved).page(args.query)

    async def follow(self, args: FollowArgs, inv: GatewayInvocation, sink: StreamSink) -> Callable[[], None]:
        saved = await self.read(args.session_id)
        hub = self.hub_for(args.session_id)
        start = 0 if args.cursor is None else args.cursor + 1
        count = len(saved.lines)
        if args.window is not None and count - start > args.window:
            # the client holds a window: the last events now, the rest in pages (indexed from now)
            first = count - args.window
            await asyncio.to_thread(saved.verify, first, count)
            self.sources.saved(saved).prepare()
            inv.note("follow", f"the last {args.window} of {count} events; the rest in pages")
            return hub.open(sink, args.cursor, cold=ColdLog(saved.header, saved.lines), window=args.window)
        if saved.checked or count - start <= FIRST_PART or start > count:
            await asyncio.to_thread(saved.verify, max(0, start), count)
            inv.note("follow", "snapshot from the saved log")
            return hub.open(sink, args.cursor, cold=ColdLog(saved.header, saved.lines))
        first = max(0, start) + FIRST_PART
        await asyncio.to_thread(saved.verify, max(0, start), first)
        inv.note("follow", f"snapshot from the saved log, in parts ({count} events)")
        # this hub serves the saved log only (never attached to a live session): its follower's
        # cursor is not used after the snapshot, so the later parts can follow it directly
        close = hub.open(sink, args.cursor, cold=ColdLog(saved.header, saved.lines[:first]))
        task = asyncio.get_running_loop().create_task(self._rest(saved, first, sink, hub))

        def stop() -> None:
            task.cancel()
            close()

        return stop

    async def _rest(self, saved: SavedLog, start: int, sink: StreamSink, hub: SessionHub) -> None:
        """The later snapshot parts of a log sent in parts, each validated before it goes."""
        count = len(saved.lines)
        while start < count and not sink.closed:
            stop = min(count, start + PART)
            try:
                await asyncio.to_thread(saved.verify, start, stop)
            except DshError as exc:
                sink.error(HostError(f"cannot read the saved session: {exc.message}", code=exc.code))
                return
            if sink.closed:
                return
            part = Snapshot.model_construct(session_id=saved.session_id, header=saved.header, cursor=stop - 1,
                                            live=hub.run_state.view(False, []))
            sink.item(snapshot_item(part, saved.lines[start:stop]))
            start = stop

    async def _refuse(self, *_: Any) -> Any:
        raise HostError("this is a saved log, served read-only; resume the session to run it", code="READ_ONLY")

    create = prompt = cancel = list = resume = approve = control = _refuse
    """Nothing runs a saved log: every other endpoint is refused ``READ_ONLY``."""


def store_reader(path_for: Callable[[str], Path]) -> Reader:
    """Read saved sessions of a store, off the loop; a log read is kept while its file is the
    same (its pages and follows do not read it again)."""
    kept: dict[str, tuple[tuple[int, int], SavedLog]] = {}

    def read_kept(session_id: str) -> SavedLog:
        path = path_for(session_id)
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = (-1, -1)
        hit = kept.get(session_id)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        saved = read_saved_fast(path)
        kept.pop(session_id, None)
        while len(kept) >= 3:
            kept.pop(next(iter(kept)))
        kept[session_id] = (stamp, saved)
        return saved

    async def read(session_id: str) -> SavedLog:
        return await asyncio.to_thread(read_kept, session_id)

    return read
