"""What the host is given from outside (issue 40 item 4): the observers of its live sessions and
the checkpoints of their turns.

Observers (the search index, the OpenTelemetry export: :mod:`dsh_notebook.observe`) and the
checkpoint store (:mod:`dsh_notebook.checkpoint`) watch what the host runs; the host does not
choose them and imports neither. Whoever builds a Host for real hands it a :class:`HostParts` —
:mod:`dsh_notebook.launcher` does, for the kernel's host, ``serve --stdio`` and ``run``. A Host
built without them runs with none: its sessions are logged, followed and served as ever, nothing
else indexes or exports them, and ``session/rewind``, ``session/keep`` and ``session/diff`` are
refused ``CHECKPOINT_NOT_FOUND`` (no checkpoint was taken to go back to).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..agent.agent import Agent
from ..config import Settings
from ..errors import UserError
from ..session.session import Session
from ..session.store import SessionStore
from ..wire.endpoints import DiffArgs, KeepArgs, KeptFiles, RewindArgs, Rewound, TurnDiff
from .live import AttachedCheckpoints, LiveSession

Detach = Callable[[], None]


class SessionObserver(Protocol):
    """Subscribes to one live session's events (``home``: the host's ``$DSH_HOME``, ``log_path``:
    the session's log); returns the function that unsubscribes it."""

    def __call__(self, session: Session, *, home: Path, log_path: str) -> Detach: ...


class LiveSessions(Protocol):
    """What the checkpoints read of the host's registry: its settings and log store, and the
    resolver (a rewind of a fork acts on the session that owns the checkpoints)."""

    settings: Settings
    store: SessionStore

    async def resolve(self, session_id: str) -> tuple[LiveSession, str]: ...


class AttachCheckpoints(Protocol):
    """Checkpoint ``agent``'s turns under ``home``; what it attached (``None`` when checkpoints are
    off) and the function that detaches it."""

    def __call__(self, agent: Agent, home: Path) -> tuple[AttachedCheckpoints | None, Detach]: ...


class Rewind(Protocol):
    async def __call__(self, registry: LiveSessions, live: LiveSession, args: RewindArgs, *,
                       by: str | None = None) -> Rewound: ...


class Keep(Protocol):
    async def __call__(self, registry: LiveSessions, live: LiveSession, args: KeepArgs, *,
                       by: str | None = None) -> KeptFiles: ...


class Diff(Protocol):
    async def __call__(self, registry: LiveSessions, live: LiveSession, args: DiffArgs) -> TurnDiff: ...


@dataclass(frozen=True)
class Checkpoints:
    """The checkpoint store as the host uses it: ``attach`` to every live agent it starts, and the
    three endpoints that read or restore what the checkpoints took."""

    attach: AttachCheckpoints
    rewind: Rewind
    keep: Keep
    diff: Diff


@dataclass(frozen=True)
class HostParts:
    """The observers attached to every live session, and the checkpoints (``None``: none)."""

    observers: tuple[SessionObserver, ...] = ()
    checkpoints: Checkpoints | None = None

    def checkpoints_or_refuse(self) -> Checkpoints:
        """The checkpoints, or ``CHECKPOINT_NOT_FOUND`` when this host was given none."""
        if self.checkpoints is None:
            raise UserError("this host keeps no checkpoints (it was started without a checkpoint store)",
                            code="CHECKPOINT_NOT_FOUND")
        return self.checkpoints


NO_PARTS = HostParts()
