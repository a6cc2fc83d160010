"""Questions every reader of the client fold asks, answered from its state (never from frames).

Mixed into :class:`~.model.ClientSessionModel`; ``js/src/fold.ts`` has the same methods
(``liveText``, ``waitingApprovals``, ``turnEndAfter``, ``submissionOutcome``, ``finalAnswer``).
"""

from __future__ import annotations

from ..wire.base import dump, tag
from ..wire.events import AnyEvent, AssistantMessageEvent, TurnEndReason
from ..wire.fold_state import (
    InboxState,
    PendingApprovalState,
    StreamingAttempt,
    Submission,
    ToolState,
    TurnEndEntry,
)

CANCELED_REASON = TurnEndReason(kind="aborted", cause="canceled before it ran")


class ModelViews:
    start: int
    cursor: int
    events: list[AnyEvent]
    attempt: StreamingAttempt | None
    tools: dict[str, ToolState]
    approvals: dict[str, PendingApprovalState]
    inbox: InboxState
    submissions: dict[str, Submission]
    turn_ends: list[TurnEndEntry]

    def event(self, seq: int | None) -> AnyEvent | None:
        """The folded event with that seq (``None`` if it is not held)."""
        if seq is None or not self.start < seq <= self.cursor:
            return None
        return self.events[seq - self.start - 1]

    def streaming_text(self) -> str:
        """The text the streaming attempt has streamed so far (its text blocks)."""
        blocks = self.attempt["blocks"] if self.attempt else []
        return "".join(b["text"] for b in blocks if tag(b) == "text")

    def waiting_approvals(self) -> list[PendingApprovalState]:
        """Calls that wait for an approval decision now (from events and transient frames)."""
        out = dict(self.approvals)
        for tool in self.tools.values():
            if tool["waiting"] and tool["callId"] not in out:
                out[tool["callId"]] = PendingApprovalState(callId=tool["callId"], name=tool["name"], reason=None)
        return list(out.values())

    def turn_end_after(self, seq: int | None) -> TurnEndEntry | None:
        """The first ``turn/end`` with a seq greater than ``seq``."""
        return next((t for t in self.turn_ends if t["seq"] is not None and seq is not None and t["seq"] > seq), None)

    def submission_outcome(self, request_id: str) -> TurnEndEntry | None:
        """How a submission ended: the ``turn/end`` of the turn that took it, a synthetic
        ``aborted`` end if it was canceled from the inbox, ``None`` while on its way."""
        sub = self.submissions.get(request_id)
        if sub is None:
            return None
        if sub["state"] == "canceled":
            return TurnEndEntry(turn=None, reason=dump(CANCELED_REASON), seq=sub["claimSeq"])
        if sub["state"] in ("claimed", "delivered"):
            return self.turn_end_after(sub["claimSeq"])
        return None

    def final_answer(self, turn: int | None = None) -> str:
        """The text of the last assistant message of ``turn`` (default: the last ended turn)."""
        if turn is None:
            if not self.turn_ends:
                return ""
            turn = self.turn_ends[-1]["turn"]
        for e in reversed(self.events):
            if isinstance(e, AssistantMessageEvent) and e.turn == turn and e.message.text:
                return e.message.text
        return ""
