"""``DshClient``: the synchronous, high-level client the magics and the CLI use.

It goes the whole seed 001 path — Remote → Connection → transport → Host connection handler →
Gateway → Session Controller — and never touches host objects directly. Two returns stay
separate: :meth:`DshClient.prompt` returns a :class:`Receipt` as soon as the host has put the
message into the Agent's inbox (``accepted``); the answer comes through a follow stream, which
:meth:`FollowHandle.wait_turn_end` waits on.

Threads: every method may be called from any thread except a stream callback's (the delivery
thread; a blocking call there raises ``DEADLOCK``). ``on_frame(frame, model)`` callbacks run on
the delivery thread after the frame is folded into the handle's :class:`ClientSessionModel`;
keep them short (queue work elsewhere). Waits poll every ``poll`` seconds and call ``idle()``
in between — the notebook passes the function that services main-thread work there — and a
``KeyboardInterrupt`` propagates so the caller can :meth:`DshClient.cancel`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import HostError
from ..wire.endpoints import (
    Compacted,
    DebugState,
    Decided,
    ListedSession,
    ModeSet,
    PromptArgs,
    PromptCommand,
    Resumed,
    Rewound,
    SessionCreated,
    SessionInfo,
    TextPart,
)
from ..wire.fold_state import Json
from .connection import Connection, Subscription, Transport
from .follow import FollowHandle, FrameCallback, Receipt, TurnOutcome
from .model import ClientSessionModel
from .remote import Remote, checked

if TYPE_CHECKING:
    from ..host.host import Host

__all__ = ["DshClient", "FollowHandle", "Receipt", "TurnOutcome"]


class DshClient:
    """Create sessions, submit prompts, follow them — all through the host's Gateway."""

    def __init__(self, host: Host | None = None, *, transport: Transport | None = None, caller: str = "client"):
        if transport is None:
            from ..launcher import process_host
            from .transport import InProcessTransport

            transport = InProcessTransport(host or process_host(), caller=caller)
        self.host = host
        self.connection = Connection(transport)
        self.remote = Remote(self.connection)
        self._follows: dict[str, list[FollowHandle]] = {}

    # -- sessions -----------------------------------------------------------------------------
    def create_session(
        self, *, cwd: str | None = None, model: str | None = None, approve: str | None = None,
        base_url: str | None = None, max_steps: int | None = None, max_time: float | None = None,
        rules: str | None = None, **request: Any,
    ) -> SessionCreated:
        """``max_steps`` / ``max_time`` (turn budgets, 0: unbounded), ``rules`` (an approval
        rules file) and ``request`` (``mode``, ``max_tokens``, ``options``, ``tools``, ``max_repeats``,
        ``first_byte_timeout``, ``idle_timeout``) are :class:`~dsh_notebook.host.contract.SessionOptions`."""
        created: SessionCreated = self.remote.session.create(
            cwd=cwd, model=model, approve=approve, base_url=base_url, max_steps=max_steps, max_time=max_time,
            rules=rules, **request,
        )
        return created

    def resume(self, session_id: str, *, model: str | None = None, approve: str | None = None,
               base_url: str | None = None, max_steps: int | None = None, max_time: float | None = None,
               rules: str | None = None, **request: Any) -> Resumed:
        resumed: Resumed = self.remote.session.resume(
            session_id=session_id, model=model, approve=approve, base_url=base_url, max_steps=max_steps,
            max_time=max_time, rules=rules, **request,
        )
        return resumed

    def info(self, session_id: str) -> SessionInfo:
        info: SessionInfo = self.remote.session.info(session_id=session_id)
        return info

    def compact(self, session_id: str) -> Compacted:
        """Summarise the session's older turns into one message now (``session/compact``)."""
        done: Compacted = self.remote.session.compact(session_id=session_id)
        return done

    def rewind(self, session_id: str, to_turn: int | None = None, **args: Any) -> Rewound:
        """``session/rewind``: files (default), ``conversation``, ``variables`` back to the start of
        ``to_turn`` (default: the last turn); ``paths``, ``dry_run``, ``force``."""
        done: Rewound = self.remote.session.rewind(session_id=session_id, to_turn=to_turn, **args)
        return done

    def debug(self, session_id: str, action: str, **args: Any) -> DebugState:
        """``session/debug``: ``break`` (``stages``, ``tools``), ``continue``, ``step``, ``edit``
        (``target``, ``value``, ``call_id``) or ``state`` — see :mod:`dsh_notebook.agent.debugger`."""
        given = {k: v for k, v in args.items() if v is not None or k == "value"}
        state: DebugState = self.remote.session.debug(session_id=session_id, action=action, **given)
        return state

    def list_sessions(self) -> list[ListedSession]:
        return list(self.remote.session.list().sessions)

    def cancel(self, session_id: str) -> bool:
        """Abort the running turn (it ends ``aborted``, every call answered). ``False`` if idle."""
        return bool(self.remote.session.cancel(session_id=session_id).cancelled)

    def approve(self, session_id: str, call_id: str, decision: str, scope: str = "call", *,
                mode: str | None = None, feedback: str | None = None) -> Decided:
        """``scope="session"``: allow this tool (bash: a read-only command name or this exact
        command) for the rest of the session. ``exit_plan_mode``: ``mode`` (``accept-edits`` or
        ``default``) with allow, ``feedback`` with deny (keep planning)."""
        extra: dict[str, Any] = {k: v for k, v in (("mode", mode), ("feedback", feedback)) if v is not None}
        decided: Decided = self.remote.session.approve(session_id=session_id, call_id=call_id, decision=decision,
                                                       scope=scope, **extra)
        return decided

    def set_mode(self, session_id: str, mode: str) -> ModeSet:
        """``session/mode``: the session's permission mode from now on (``BYPASS_NOT_ARMED`` …)."""
        done: ModeSet = self.remote.session.mode(session_id=session_id, mode=mode)
        return done

    # -- prompts ------------------------------------------------------------------------------
    def prompt(self, text: str, session_id: str, mode: str = "queue", request_id: str | None = None,
               cell: Mapping[str, object] | None = None) -> Receipt:
        """Submit; returns once the message is in the Agent's inbox (or raises a coded error).
        ``cell``: the notebook cell that sent it (``{cellId?, executionCount?}``), recorded on the
        user message."""
        rid = request_id or f"req_{uuid.uuid4().hex[:12]}"
        # the one check of the prompt, before anything is recorded or sent (a coded HostError:
        # EMPTY_CONTENT, BAD_ARGS …); what is sent is this model, not validated again
        command = checked(PromptCommand, {"session_id": session_id, "request_id": rid, "mode": mode,
                                          "content": (TextPart(text=text),), "cell": cell}, "session/prompt")
        handles = list(self._follows.get(session_id, ()))
        for h in handles:
            with h.cond:
                if rid not in h.model.submissions:
                    h.model.submit(rid, text, command.mode)
        exchange = self.remote.session.prompt.send(PromptArgs(request=command))
        try:
            value = exchange.future.result()
        except HostError as exc:
            for h in handles:
                with h.cond:
                    h.model.rejected(rid, exc.to_dict())
            raise
        for h in handles:
            with h.cond:
                h.model.accepted(rid, exchange.rpc_id)
        return Receipt(bool(value.get("accepted")), session_id, rid, exchange.rpc_id)

    def follow(
        self, session_id: str, cursor: int | None = None, on_frame: FrameCallback | None = None,
        *, model: ClientSessionModel | None = None,
    ) -> FollowHandle:
        """Open ``session/follow``; frames are folded into ``handle.model`` (then ``on_frame``).

        Reconnect: pass the ``model`` of an earlier follow — the follow resumes from its cursor
        and keeps folding into it (no loss, no duplicates). ``cursor`` alone starts a fresh model
        at that cursor (it then holds only the events after it)."""
        handles = self._follows.setdefault(session_id, [])
        def forget(h: FollowHandle) -> None:
            if h in handles:
                handles.remove(h)

        handle = FollowHandle(self, session_id, cursor, on_frame, on_close=forget, model=model)
        handles.append(handle)
        return handle

    def read(self, session_id: str, timeout: float = 30.0) -> ClientSessionModel:
        """The folded snapshot of a live or saved session (header and every event), then close."""
        handle = self.follow(session_id)
        try:
            handle.wait_snapshot(timeout)
        finally:
            handle.close()
        return handle.model

    def wait_turn_end(
        self, session_id: str, request_id: str | None = None, *, timeout: float | None = None,
        idle: Callable[[], None] | None = None, on_frame: FrameCallback | None = None,
    ) -> TurnOutcome:
        """Follow ``session_id`` until the turn of ``request_id`` ends; its outcome and answer."""
        handle = self.follow(session_id, None, on_frame)
        try:
            outcome = handle.wait_turn_end(request_id, timeout=timeout, idle=idle)
        finally:
            handle.close()
        return self._with_log(outcome)

    def run(
        self, text: str, session_id: str | None = None, *, mode: str = "queue", model: str | None = None,
        cwd: str | None = None, approve: str | None = None, base_url: str | None = None,
        on_frame: FrameCallback | None = None, timeout: float | None = None, idle: Callable[[], None] | None = None,
    ) -> TurnOutcome:
        """Create (or resume) a session, prompt, follow to the end of that turn."""
        if session_id is None:
            session_id = self.create_session(cwd=cwd, model=model, approve=approve, base_url=base_url).session_id
        else:
            self.resume(session_id, model=model, approve=approve, base_url=base_url)
        handle = self.follow(session_id, None, on_frame)
        try:
            handle.wait_snapshot(timeout)
            receipt = self.prompt(text, session_id, mode)
            outcome = handle.wait_turn_end(receipt.request_id, timeout=timeout, idle=idle)
        finally:
            handle.close()
        return self._with_log(outcome)

    def _with_log(self, outcome: TurnOutcome) -> TurnOutcome:
        try:
            path = self.info(outcome.session_id).log_path
        except HostError:
            path = None
        return TurnOutcome(outcome.session_id, outcome.request_id, outcome.turn, outcome.reason, outcome.final_answer, path)

    # -- host-wide ----------------------------------------------------------------------------
    def control(self, on_frame: Callable[[Json], None]) -> Subscription:
        """Subscribe to ``session/control`` (baseline, then queue and status frames)."""
        sub: Subscription = self.remote.session.control.open(on_frame)
        return sub

    def close(self) -> None:
        for handles in list(self._follows.values()):
            for h in list(handles):
                h.close()
        self.connection.close()

    def __enter__(self) -> DshClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
