"""Checkpoint every turn of a live agent, from outside the agent (through its Scope's hooks).

- ``agent/pre-step`` of step 1: snapshot the workspace (off the host loop) and commit
  ``checkpoint/taken`` — before any tool of the turn runs;
- ``agent/turn-end`` (just before ``turn/end``): snapshot again and commit ``checkpoint/changes``
  (what the turn changed, by any tool, with the hashes a later rewind checks conflicts against).

A failure to checkpoint never fails the turn: the turn goes on and the failure is an event,
``checkpoint/failed`` with its code (``DISK_FULL`` on a full disk: nothing partial is left in the
store, so the turn's own events still have room), and one warning line — never a traceback. A
cancelled turn stops its scan at the next folder. A rewind of the session holds
:attr:`TurnCheckpoints.rewinding`; a turn that starts meanwhile takes its first checkpoint (and
so runs its first tool) only after the rewind is done. ``DSH_CHECKPOINTS=0`` turns checkpoints off.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DshError, ErrorCode
from ..wire.events import (
    CheckpointChanges,
    CheckpointFailed,
    CheckpointPhase,
    CheckpointTaken,
    FileChange,
)
from .diff import MAX_LISTED, Changes, diff_listings, renames
from .store import CheckpointStore, Entry, Snapshot
from .variables import keeper

log = logging.getLogger(__name__)
_STORES: dict[str, CheckpointStore] = {}


def store_for(home: str | Path) -> CheckpointStore:
    """One store per ``$DSH_HOME`` in this process (its lock serialises snapshots)."""
    key = str(Path(home).expanduser())
    if key not in _STORES:
        _STORES[key] = CheckpointStore(key)
    return _STORES[key]


def enabled(env: Any = None) -> bool:
    return (env or os.environ).get("DSH_CHECKPOINTS", "1").strip().lower() not in ("0", "false", "no", "off")


def change_of(path: str, entry: Entry, before: Entry | None = None, renamed_from: str | None = None) -> FileChange:
    return FileChange(path=path, size=entry.size, sha=entry.sha, link=entry.target if entry.kind == "l" else None,
                      before_size=before.size if before is not None else None, renamed_from=renamed_from)


def changes_event(turn: int, start: str, end: str, ch: Changes, variables: tuple[Any, ...] = ()) -> CheckpointChanges:
    moved = renames(ch)
    return CheckpointChanges(
        turn=turn, snapshot=start, after=end,
        added=tuple(change_of(p, e, renamed_from=moved.get(p)) for p, e in ch.added[:MAX_LISTED]),
        modified=tuple(change_of(p, b, a) for p, a, b in ch.modified[:MAX_LISTED]),
        deleted=tuple(FileChange(path=p, size=e.size, link=e.target) for p, e in ch.deleted[:MAX_LISTED]),
        added_count=len(ch.added), modified_count=len(ch.modified), deleted_count=len(ch.deleted),
        variables=variables,
    )


class TurnCheckpoints:
    """The checkpoints of one live agent's turns."""

    def __init__(self, agent: Any, store: CheckpointStore) -> None:
        self.agent, self.store = agent, store
        self.start: dict[int, Snapshot] = {}
        self.variables = keeper(agent.session.id, store.root / "variables")  # notebook variables the turns' python calls change
        self._rewinding: asyncio.Lock | None = None

    @property
    def rewinding(self) -> asyncio.Lock:
        """Held by a rewind of this session (created on the host loop, on first use)."""
        if self._rewinding is None:
            self._rewinding = asyncio.Lock()
        return self._rewinding

    @property
    def cwd(self) -> str:
        return str(self.agent.session.cwd or "")

    def failed(self, turn: int | None, phase: CheckpointPhase, code: ErrorCode, message: str) -> None:
        """A checkpoint that could not be taken: a warning line and a ``checkpoint/failed`` event."""
        log.warning("checkpoint at the %s of turn %s not taken [%s]: %s", phase, turn, code, message)
        self.agent.session.append(CheckpointFailed(turn=turn, phase=phase, code=code, message=message))

    async def _take(self, turn: int | None, phase: CheckpointPhase) -> Snapshot | None:
        if not self.cwd:
            return None
        cancel = threading.Event()
        task = asyncio.ensure_future(asyncio.to_thread(self.store.take, self.cwd, None, cancel))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a scan stopped late is not "unretrieved"
        try:
            async with self.rewinding:
                return await asyncio.shield(task)
        except asyncio.CancelledError:
            cancel.set()  # the scan stops at its next folder
            if phase == "start":
                raise  # the turn answers its cancel now
            return None  # a turn ending cancelled: it ends without this checkpoint
        except DshError as exc:
            self.failed(turn, phase, exc.code, exc.message)
        except Exception as exc:  # a defect: still no traceback for the user; the detail at debug level
            log.debug("checkpoint of %s failed", self.cwd, exc_info=True)
            self.failed(turn, phase, "INTERNAL", f"{type(exc).__name__}: {exc}")
        return None

    async def pre_step(self, decision: Any) -> None:
        try:
            await self._pre_step(decision)
        except DshError as exc:
            self.failed(getattr(decision, "turn", None), "start", exc.code, exc.message)

    async def turn_end(self, stopping: Any) -> None:
        try:
            await self._turn_end(stopping)
        except DshError as exc:
            self.failed(getattr(stopping, "turn", None), "end", exc.code, exc.message)

    async def begin(self, turn: int) -> None:
        """The checkpoint at the start of a turn the agent does not drive (an external agent's
        turn of writes): ``checkpoint/taken`` before its call runs."""
        await self.pre_step(_TurnMark(turn, 1))

    async def end(self, turn: int) -> None:
        """The checkpoint at the end of such a turn: ``checkpoint/changes``."""
        await self.turn_end(_TurnMark(turn, 1))

    async def _pre_step(self, decision: Any) -> None:
        if getattr(decision, "step", 0) != 1 or decision.turn in self.start:
            return
        snap = await self._take(decision.turn, "start")
        if snap is None:
            return
        self.start[decision.turn] = snap
        self.variables.begin(decision.turn)
        self.agent.session.append(CheckpointTaken(
            turn=decision.turn, snapshot=snap.id, cwd=snap.cwd, files=snap.files, bytes=snap.bytes,
            new_blobs=snap.new_blobs, new_bytes=snap.new_bytes, unrestorable=tuple(snap.unrestorable[:MAX_LISTED]),
        ))

    async def _turn_end(self, stopping: Any) -> None:
        turn = getattr(stopping, "turn", None)
        start = self.start.pop(turn, None) if isinstance(turn, int) else None
        if start is None or not isinstance(turn, int):
            return
        end = await self._take(turn, "end")
        if end is None:
            return
        variables = tuple(self.variables.end(turn))
        ch = diff_listings(start.listing, end.listing)
        self.agent.session.append(changes_event(turn, start.id, end.id, ch, variables))


@dataclass(frozen=True)
class _TurnMark:
    """What the checkpoint hooks read of a step decision or a stopping turn."""

    turn: int
    step: int


def attach_checkpoints(agent: Any, home: str | Path) -> tuple[TurnCheckpoints | None, Callable[[], None]]:
    """Checkpoint ``agent``'s turns under ``home/checkpoints``; returns them and the detach function."""
    if not enabled():
        return None, lambda: None
    tc = TurnCheckpoints(agent, store_for(home))
    disposables = [agent.context.on("agent/pre-step", tc.pre_step), agent.context.on("agent/turn-end", tc.turn_end)]

    def detach() -> None:
        for d in disposables:
            d()

    return tc, detach
