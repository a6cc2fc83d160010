"""The read-only controller: ``session/info`` and ``session/follow`` for a log no agent owns.

A saved session — on disk in the Host's store, or a log file a widget replays — is served by a
:class:`ReadOnlyController` through the same Descriptors and Gateway as a live one: ``info``
describes it from its log (every :class:`~dsh_notebook.wire.endpoints.SessionInfo` field, with
``live: false``), ``follow`` sends the snapshot of its stored lines (``live.attached`` false) and
stays open. Every other endpoint is refused with ``READ_ONLY`` (resume the session to run it). A
log that cannot be read answers each call with its own coded error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..errors import DshError, HostError
from ..session.saved import SavedLog, read_saved
from ..wire.endpoints import FollowArgs, SessionInfo, SessionRef
from .follow import ColdLog, SessionHub
from .gateway import GatewayInvocation, StreamSink

Reader = Callable[[str], Awaitable[SavedLog]]
"""Session id → its saved log (raises a coded error when there is none)."""


class ReadOnlyController:
    """The ``sessionController`` Service of sessions no live agent owns."""

    def __init__(self, read: Reader, hub_for: Callable[[str], SessionHub], *, default_model: str) -> None:
        self.read = read
        self.hub_for = hub_for
        self.default_model = default_model

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

    async def follow(self, args: FollowArgs, inv: GatewayInvocation, sink: StreamSink) -> Callable[[], None]:
        saved = await self.read(args.session_id)
        hub = self.hub_for(args.session_id)
        inv.note("follow", "snapshot from the saved log")
        return hub.open(sink, args.cursor, cold=ColdLog(saved.header, saved.lines))

    async def _refuse(self, *_: Any) -> Any:
        raise HostError("this is a saved log, served read-only; resume the session to run it", code="READ_ONLY")

    create = prompt = cancel = list = resume = approve = control = _refuse
    """Nothing runs a saved log: every other endpoint is refused ``READ_ONLY``."""


def store_reader(path_for: Callable[[str], Path]) -> Reader:
    """Read saved sessions of a store, off the loop."""

    async def read(session_id: str) -> SavedLog:
        return await asyncio.to_thread(read_saved, path_for(session_id))

    return read
