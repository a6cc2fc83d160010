"""Follow handles and the two returns of a submission (:class:`Receipt`, :class:`TurnOutcome`).

A :class:`FollowHandle` is one open ``session/follow``: frames are folded into its
:class:`ClientSessionModel` under ``handle.cond`` (a ``threading.Condition``) on the delivery
thread, then handed to ``on_frame(frame, model)``. Waits (:meth:`FollowHandle.wait`,
:meth:`FollowHandle.wait_turn_end`) poll the condition, call ``idle()`` between polls and let a
``KeyboardInterrupt`` through. Closing a handle sends ``cancel`` for the stream only: the run
goes on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import HostError
from ..wire.events import TurnEndReason
from ..wire.fold_state import Json
from .connection import Subscription
from .model import ClientSessionModel
from .remote import Remote


class HasRemote(Protocol):
    """What a follow needs of its client (a :class:`~.dsh_client.DshClient`): the typed remote."""

    @property
    def remote(self) -> Remote: ...

FrameCallback = Callable[[Json, ClientSessionModel], None]
"""``on_frame(item, model)``: the follow item as received (JSON), after the model folded it."""


@dataclass(frozen=True)
class Receipt:
    """The first return of a submission: the host accepted it (the answer comes by follow)."""

    accepted: bool
    session_id: str
    request_id: str
    rpc_id: str


@dataclass(frozen=True)
class TurnOutcome:
    """The second return: how the turn that ran a submission ended, and its final answer."""

    session_id: str
    request_id: str | None
    turn: int | None
    reason: Json
    final_answer: str
    log_path: str | None = None

    @property
    def completed(self) -> bool:
        return self.reason.get("kind") == "completed"

    def describe_reason(self) -> str:
        r = TurnEndReason.model_validate(self.reason)
        detail = r.cause or (r.error.message if r.error else "")
        code = f" [{r.error.code}]" if r.error else ""
        if r.kind == "budget" and r.limit is not None:  # "budget: max-steps 5 reached"
            unit = "s" if detail == "max-time" else ""
            detail = f"{detail} {r.limit}{unit} reached"
        return f"{r.kind}{code}{': ' + detail if detail else ''}"


class FollowHandle:
    """An open follow of one session: its folded model, waits, and ``close()``."""

    def __init__(
        self, client: HasRemote, session_id: str, cursor: int | None, on_frame: FrameCallback | None,
        on_close: Callable[[FollowHandle], None] | None = None, model: ClientSessionModel | None = None,
    ):
        self.client, self.session_id, self.on_frame, self._on_close = client, session_id, on_frame, on_close
        if model is not None and cursor is None:
            cursor = model.cursor if model.cursor >= 0 else None
        self.model = model or ClientSessionModel(session_id, cursor=-1 if cursor is None else cursor)
        self.cond = threading.Condition()
        self._snapshots_before = self.model.snapshots
        self.subscription: Subscription = client.remote.session.follow.open(
            self._on_item, on_error=self._on_done, on_end=self._on_done, session_id=session_id, cursor=cursor
        )

    def _on_item(self, frame: Json) -> None:
        with self.cond:
            self.model.apply(frame)
            self.cond.notify_all()
        if self.on_frame is not None:
            self.on_frame(frame, self.model)

    def _on_done(self, *_: Any) -> None:
        with self.cond:
            self.cond.notify_all()

    @property
    def closed(self) -> bool:
        return self.subscription.closed

    def wait(
        self, predicate: Callable[[ClientSessionModel], Any], *, timeout: float | None = None,
        idle: Callable[[], None] | None = None, poll: float = 0.05,
    ) -> Any:
        """Block until ``predicate(model)`` is truthy (returned); ``TIMEOUT`` / stream errors raise."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.cond:
                value = predicate(self.model)
                if value:
                    return value
                if self.subscription.closed:
                    err = self.subscription.error
                    raise err or HostError(f"the follow of {self.session_id} ended", code="STREAM_ENDED")
                wait = poll if deadline is None else min(poll, max(0.0, deadline - time.monotonic()))
                self.cond.wait(wait)
            if deadline is not None and time.monotonic() >= deadline:
                raise HostError(f"timed out after {timeout}s waiting on {self.session_id}", code="TIMEOUT")
            if idle is not None:
                idle()

    def wait_snapshot(self, timeout: float | None = 30.0) -> None:
        self.wait(lambda _m: self.snapshot_seen, timeout=timeout)

    @property
    def snapshot_seen(self) -> bool:
        """Whether this follow's snapshot has been folded (a reused model counts only new ones)."""
        return self.model.snapshots > self._snapshots_before

    def wait_turn_end(
        self, request_id: str | None = None, *, timeout: float | None = None,
        idle: Callable[[], None] | None = None,
    ) -> TurnOutcome:
        """Wait for the end of the turn that ran ``request_id`` (default: the next turn end)."""
        self.wait_snapshot(timeout)
        if request_id is None:
            with self.cond:
                after = self.model.cursor
            end = self.wait(lambda m: m.turn_end_after(after), timeout=timeout, idle=idle)
        else:
            end = self.wait(lambda m: m.submission_outcome(request_id), timeout=timeout, idle=idle)
        with self.cond:
            answer = self.model.final_answer(end["turn"]) if end["turn"] is not None else ""
        reason = end["reason"] if isinstance(end["reason"], dict) else {}
        return TurnOutcome(self.session_id, request_id, end["turn"], reason, answer)

    def close(self) -> None:
        """Stop following (the run goes on)."""
        self.subscription.close()
        if self._on_close is not None:
            self._on_close(self)


