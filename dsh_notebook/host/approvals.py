"""Host-side approvals for ``--approve ask`` (seed 001 object 34): wait for ``session/approve``.

When a tool's policy says *ask*, the tool runtime logs ``approval/asked``, emits a tool-runtime
frame ``phase: "approval", status: "waiting"`` and awaits ``approver.decide(request)``. In a host
session that approver is :class:`PendingApprovals`: it parks the request until some client —
stdin in the magic, a button in the widget, a line on ``serve --stdio`` — calls
``session/approve {sessionId, callId, decision, scope?, mode?, feedback?}`` (``scope: "session"``:
allow for the rest of the session; ``mode`` / ``feedback``: the answer to ``exit_plan_mode``).
Cancelling the run cancels the wait (the runtime records ``cancelled``). Lives on the host loop;
not thread-safe by itself.

A wait is a durability point (as a debugger pause is): ``durable`` (the log's flush, off the
loop) runs once the request is parked, so the ``approval/asked`` a client sees in its follow —
and everything before it — is in the file while the person decides: ``show`` and ``fork --at``
of that seq work during the wait. A failed flush is logged, not raised (the loop's next flush
reports it as the turn's).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..errors import HostError
from ..redaction import redact, redact_json_text
from ..tools.base import ApprovalDecision, ApprovalRequest, Approver, PlanAnswer
from ..wire.follow import PendingApproval


@dataclass
class _Waiting:
    request: ApprovalRequest
    future: asyncio.Future[ApprovalDecision]


class PendingApprovals(Approver):
    """An :class:`~dsh_notebook.tools.base.Approver` that waits for a client's decision."""

    name = "host"

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._waiting: dict[str, _Waiting] = {}
        self.on_change = on_change
        self.decided: list[tuple[str, ApprovalDecision]] = []  # for learners: what was answered
        self._by: dict[str, str] = {}  # call id → the client that answered
        self._session_scope: set[str] = set()  # call ids allowed "for the rest of the session"
        self._plans: dict[str, PlanAnswer] = {}  # exit_plan_mode answers: the mode chosen, or feedback
        self.closed = False  # no client can answer any more: every ask is ``cancelled``
        self.durable: Callable[[], Awaitable[None]] | None = None  # flushes the log (set by the registry)

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        if self.closed:
            return "cancelled"
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._waiting[request.call_id] = _Waiting(request, future)
        self._changed()
        try:
            await self._flush()
            return await future
        finally:
            self._waiting.pop(request.call_id, None)
            self._changed()

    async def _flush(self) -> None:
        if self.durable is not None:
            await self.durable()

    def answered_by(self, call_id: str) -> str:
        """The caller that answered ``call_id`` (``host`` when the host itself cancelled it)."""
        return f"{self.name}:{self._by.pop(call_id)}" if call_id in self._by else self.name

    def granted(self, call_id: str) -> bool:
        """Whether the client allowed ``call_id`` for the rest of the session (``scope: session``)."""
        if call_id in self._session_scope:
            self._session_scope.discard(call_id)
            return True
        return False

    def plan_answer(self, call_id: str) -> PlanAnswer | None:
        return self._plans.pop(call_id, None)

    def answer(self, call_id: str, decision: ApprovalDecision, *, by: str = "client",
               scope: str = "call", mode: str | None = None, feedback: str | None = None) -> None:
        """Resolve the wait of ``call_id``; ``UNKNOWN_APPROVAL`` when nothing waits for it.
        ``scope="session"`` with ``allow``: allow this tool (bash: a read-only command name or
        this exact command) for the rest of the session — the runtime logs the grant and the session's policy honours it."""
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting.future.done():
            raise HostError(f"no approval is pending for call {call_id!r}", code="UNKNOWN_APPROVAL")
        self.decided.append((call_id, decision))
        self._by[call_id] = by
        if scope == "session" and decision == "allow":
            self._session_scope.add(call_id)
        if mode is not None or feedback is not None:
            self._plans[call_id] = PlanAnswer(mode=mode, feedback=feedback)  # type: ignore[arg-type]
        waiting.future.set_result(decision)

    def pending(self) -> list[PendingApproval]:
        return [
            PendingApproval(
                call_id=w.request.call_id,
                name=w.request.tool_name,
                arguments=redact_json_text(w.request.arguments),  # shown masked; the call runs them as written
                reason=redact(w.request.reason) if w.request.reason else None,  # it may quote a rule's text
            )
            for w in self._waiting.values()
        ]

    def cancel_all(self, *, close: bool = False) -> None:
        self.closed = self.closed or close
        for waiting in list(self._waiting.values()):
            if not waiting.future.done():
                waiting.future.set_result("cancelled")

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
