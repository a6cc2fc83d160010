"""One live session of the host, and what the resolver reads of a session's log.

A :class:`LiveSession` is what the Agent registry (:mod:`.registry`) keeps per session id: the
Core Session, its Agent, its follow hub, its pending approvals, the requestIds it has admitted,
what to undo when it closes, and what the host's checkpoints attached to it. The functions read a
log for the resolver: the requestIds it admitted, the model and the endpoint it last talked to.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..agent.agent import Agent
from ..errors import UserError
from ..models.routing import LOCAL_PROVIDERS
from ..providers import own_base_url
from ..session.session import Session
from ..tools.base import ApprovalMode
from ..tools.modes import approve_of_mode
from ..wire.endpoints import SessionInfo
from ..wire.events import (
    InboxSpliced,
    PermissionMode,
    RequestFrozen,
    RequestHeader,
    UserMessageEvent,
)
from .approvals import PendingApprovals
from .follow import SessionHub
from .options import request_info

Resolution = Literal["live", "resumed", "created"]


def is_local(model: str) -> bool:
    """``replay:…`` / ``script:…``: a model whose id does not depend on a logged endpoint."""
    return model.split(":", 1)[0] in LOCAL_PROVIDERS


def refuse_self_replay(session_id: str, model: str | None, path: Path) -> None:
    """``replay:<this session>`` would answer a session with its own (growing) log: ``BAD_MODEL``."""
    if model is None or not model.startswith("replay:"):
        return
    name = model.removeprefix("replay:")
    target = Path(name).expanduser()
    if name == session_id or (target.exists() and target.resolve() == path.resolve()):
        raise UserError(f"session {session_id} cannot replay itself: replay the session it was forked from "
                        f"(--model replay:ORIGIN_ID), or give it a model", code="BAD_MODEL")


class AttachedCheckpoints(Protocol):
    """What the checkpoints attached to a live session offer the host: the checkpoints of a turn the
    agent does not drive (an external agent's turn of writes), taken before its call runs and
    closed at its end. The rewind, keep and diff endpoints read the rest (``host/parts.py``)."""

    async def begin(self, turn: int) -> None: ...

    async def end(self, turn: int) -> None: ...


@dataclass
class LiveSession:
    """One live session: facts, executor, observers."""

    session: Session
    agent: Agent
    hub: SessionHub
    approvals: PendingApprovals
    model: str
    resolution: Resolution
    log_path: str
    request_ids: dict[str, str] = field(default_factory=dict)  # requestId -> content_digest admitted
    undo: list[Callable[[], None]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what resuming its log dropped or deferred
    checkpoints: AttachedCheckpoints | None = None  # what the host's checkpoints attached (None: none, or DSH_CHECKPOINTS=0)

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def mode(self) -> PermissionMode:
        """The permission mode in force (issue 36); ``approve`` is its legacy reading."""
        return self.agent.modes.current

    @property
    def approve(self) -> ApprovalMode:
        return approve_of_mode(self.mode)

    async def set_mode(self, mode: PermissionMode, by: str) -> int | None:
        """Change the mode (``BYPASS_NOT_ARMED`` …) and make the change durable at once (a crash
        must not resume a session in a mode it left); the ``mode/changed`` seq, ``None`` if unchanged."""
        event = self.agent.modes.change(mode, by=by, turn=self.agent.current_turn)
        if event is not None:
            await self.agent.flush_quietly("a mode change")
        return event.seq if event is not None else None

    def info(self) -> SessionInfo:
        """``session/info`` of this live session (its grants' secrets masked)."""
        agent = self.agent
        policy = agent.approval_policy
        return SessionInfo(
            session_id=self.id,
            cwd=self.session.cwd,
            model=self.model,
            approve=self.approve,
            status=agent.status,
            live=True,
            turn=agent.current_turn,
            step=agent.current_step,
            last_seq=self.session.last_seq,
            log_path=self.log_path,
            queue=tuple(agent.inbox.items()),
            pending_approvals=tuple(self.approvals.pending()),
            max_steps=agent.config.max_steps,
            max_time=agent.config.max_time,
            rules=policy.rules.source if policy is not None and policy.rules is not None else None,
            grants=tuple(policy.shown_grants()) if policy is not None else (),  # secrets masked
            request=request_info(agent),
            mode=self.mode,
        )


def content_digest(blocks: Sequence[Any]) -> str:
    """What a requestId's submission said (its text blocks), as a short stable digest."""
    texts = [getattr(b, "text", "") for b in blocks]
    return hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode()).hexdigest()[:32]


def admitted_request_ids(session: Session) -> dict[str, str]:
    """RequestIds already in the log (user messages and inbox insertions) → their content digest."""
    seen: dict[str, str] = {}
    for event in session.events:
        msgs = (event.message,) if isinstance(event, UserMessageEvent) else event.inserted if isinstance(event, InboxSpliced) else ()
        for m in msgs:
            if m.source.request_id:
                seen.setdefault(m.source.request_id, content_digest(m.content))
    return seen


def model_from_log(session: Session) -> str | None:
    for event in reversed(session.events):
        if isinstance(event, RequestFrozen):
            return f"{event.provider}:{event.model}"
    return None


def endpoint_from_log(session: Session) -> str | None:
    """The custom base URL the session's requests last went to (``None`` for a provider's own)."""
    for event in reversed(session.events):
        if isinstance(event, RequestHeader):
            provider = str(event.config.get("provider", ""))
            return None if event.endpoint == own_base_url(provider) else event.endpoint
    return None
