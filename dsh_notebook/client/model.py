"""The Client model (seed 001 objects 5 and 39): THE fold of follow and control items into view state.

Everything on the client side reads this fold — the ``%dsh`` cell rendering, stdin approvals,
``TurnResult``, the ``run`` CLI; the JS widget runs the same fold (``js/src/fold.ts``), and the
parity test checks both give the same :class:`~.state.FoldState` after every item of recorded
real runs. The state (``state()``; shapes in :mod:`.state`)::

    sessionId, header     from the snapshot
    start, cursor         where the model started (-1: the beginning) / the last seq folded
    events                the durable events, dense: events[i].seq == start + 1 + i
    status, turn, step    status items (and the snapshot's live part)
    attempt               the model request streaming now (null when none)
    tools                 callId -> {callId, name, arguments, phases, waiting, callSeq, resultSeq, isError}
    approvals             callId -> {callId, name, reason}: asked, not yet decided
    queue                 this session's inbox items from control ``queue`` frames (whole value)
    inbox                 {"next-turn": [...], "next-step": [...]} of {id, requestId, text}
    submissions           requestId -> {requestId, text, mode, state, rpcId, queuedSeq, claimSeq,
                          seq, turn, error}; also for requestIds other clients submitted
    turnEnds              [{turn, reason, seq}]
    gap                   an event (or a snapshot) skipped seqs this model lacks: reopen from cursor

Rules, per item:

- ``snapshot``: another sessionId resets everything. Its events fold as below; a snapshot whose
  cursor is beyond what was folded sets ``gap``. The live part replaces live state: status, turn,
  step; ``attempt`` rebuilt from ``live.assistant`` (its chunks replayed); ``live.tools`` frames
  folded (not twice); ``approvals`` = ``live.approvals``.
- ``event``: seq <= cursor → ignored; seq > cursor + 1 → ``gap``, ignored; else appended, and:
  ``user/message`` from a user → its submission ``delivered`` (seq, turn); ``assistant/message``
  / ``assistant/attempt`` settle a live attempt; ``tool/call`` → tools[callId] (name, arguments,
  callSeq); ``tool/result`` → resultSeq, isError, not waiting, approval gone;
  ``approval/asked`` / ``approval/decided`` → approvals (decided: not waiting);
  ``agent/inbox/spliced`` → inbox, and each inserted submission ``queued``, each removed one
  ``claimed`` or ``canceled`` (by ``outcome``); ``turn/start`` → turn; ``turn/end`` → turnEnds,
  no live attempt, nothing waiting.
- ``assistant-stream`` / ``tool-runtime``: :mod:`.live`. ``status``: status, turn, step.
- control ``baseline`` / ``queue`` / ``status`` of this session: queue / status replaced.
- the client's own calls: ``submit`` (pending), ``accepted`` (pending → accepted), ``rejected``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .live import fold_chunk, fold_splice, fold_stream, fold_tool, new_attempt, text_of
from .state import (
    FoldState,
    InboxEntry,
    Json,
    LiveAttempt,
    PendingApproval,
    Submission,
    ToolState,
    TurnEndEntry,
    new_submission,
    new_tool,
)
from .views import ModelViews

Item = Mapping[str, Any]


class ClientSessionModel(ModelViews):
    """View state of one followed session. Not thread-safe: fold under the owner's lock."""

    def __init__(self, session_id: str | None = None, *, cursor: int = -1) -> None:
        self.session_id = session_id
        self.frames = 0
        self.revision = 0  # bumped by every fold: views compare it to skip work
        self.reset(cursor)

    def reset(self, cursor: int = -1) -> None:
        self.header: Json | None = None
        self.start = self.cursor = cursor
        self.events: list[Json] = []
        self.status: str = "idle"
        self.turn: int | None = None
        self.step: int | None = None
        self.attempt: LiveAttempt | None = None
        self.tools: dict[str, ToolState] = {}
        self.approvals: dict[str, PendingApproval] = {}
        self.queue: list[Json] = []
        self.inbox: dict[str, list[InboxEntry]] = {"next-turn": [], "next-step": []}
        self.submissions: dict[str, Submission] = {}
        self.turn_ends: list[TurnEndEntry] = []
        self.gap = False

    def state(self) -> FoldState:
        """A deep copy of the whole view state (the JSON the JS fold's ``state()`` equals)."""
        return copy.deepcopy(FoldState(
            sessionId=self.session_id, header=self.header, start=self.start, cursor=self.cursor,
            events=self.events, status=self.status, turn=self.turn, step=self.step, attempt=self.attempt,
            tools=self.tools, approvals=self.approvals, queue=self.queue, inbox=self.inbox,
            submissions=self.submissions, turnEnds=self.turn_ends, gap=self.gap,
        ))

    # -- the client's own submissions -----------------------------------------------------------
    def submit(self, request_id: str, text: str, mode: str = "queue") -> None:
        self.submissions[request_id] = new_submission(request_id, text, mode)
        self.revision += 1

    def accepted(self, request_id: str, rpc_id: str | None = None) -> None:
        sub = self.submissions.setdefault(request_id, new_submission(request_id))
        sub["rpcId"] = rpc_id
        if sub["state"] == "pending":
            sub["state"] = "accepted"
        self.revision += 1

    def rejected(self, request_id: str, error: Mapping[str, Any]) -> None:
        sub = self.submissions.setdefault(request_id, new_submission(request_id))
        sub["state"], sub["error"] = "rejected", {"code": error.get("code"), "message": error.get("message")}
        self.revision += 1

    # -- the fold -------------------------------------------------------------------------------
    def apply(self, item: Item) -> None:
        """Fold one follow item."""
        self.frames += 1
        self.revision += 1
        kind = item.get("type")
        if kind == "snapshot":
            self._snapshot(item)
        elif kind == "event":
            self._event(item["event"])
        elif kind == "assistant-stream":
            self.attempt = fold_stream(self.attempt, item.get("frame") or {}, self.cursor)
        elif kind == "tool-runtime":
            fold_tool(self.tools, item.get("frame") or {})
        elif kind == "status":
            self.status, self.turn, self.step = item.get("status") or self.status, item.get("turn"), item.get("step")

    def apply_control(self, item: Item) -> None:
        """Fold one control item (only what concerns this session)."""
        self.revision += 1
        kind = item.get("type")
        if kind == "baseline":
            for entry in item.get("sessions") or ():
                if entry.get("sessionId") == self.session_id:
                    self.queue, self.status = list(entry.get("queue") or ()), entry.get("status") or self.status
        elif item.get("sessionId") == self.session_id and kind == "queue":
            self.queue = list(item.get("items") or ())
        elif item.get("sessionId") == self.session_id and kind == "status":
            self.status = item.get("status") or self.status

    def _snapshot(self, item: Item) -> None:
        if self.session_id is not None and item.get("sessionId") != self.session_id:
            self.reset()
        self.session_id, self.header = item.get("sessionId"), item.get("header")
        self.gap = False
        for event in item.get("events") or ():
            self._event(event)
        cursor = item.get("cursor")
        if cursor is not None and cursor > self.cursor:
            self.gap = True  # the snapshot skipped events this model lacks
        live = item.get("live") or {}
        self.status, self.turn, self.step = live.get("status") or "idle", live.get("turn"), live.get("step")
        self.attempt = None
        active = live.get("assistant")
        if active:
            self.attempt = attempt = new_attempt(active)
            for entry in active.get("chunks") or ():
                fold_chunk(attempt, entry.get("chunk") or {})
                if entry.get("time") is not None:
                    attempt["lastChunkTime"] = entry["time"]
        for frame in (live.get("tools") or {}).values():
            fold_tool(self.tools, frame, again=True)
        self.approvals = {
            a["callId"]: PendingApproval(callId=a["callId"], name=a["name"], reason=a.get("reason"))
            for a in live.get("approvals") or ()
        }

    def _event(self, event: Json) -> None:
        seq: Any = event.get("seq", -1)
        if seq <= self.cursor:
            return
        if seq > self.cursor + 1:
            self.gap = True
            return
        self.events.append(event)
        self.cursor = seq
        e: Any = event
        etype, turn = e.get("type"), e.get("turn")
        if etype == "user/message":
            source = e["message"].get("source") or {}
            sub = self._sub(source.get("requestId"), text_of(e["message"]))
            if sub is not None and source.get("kind") == "user":
                sub["state"], sub["seq"], sub["turn"] = "delivered", seq, turn
                if sub["claimSeq"] is None:
                    sub["claimSeq"] = seq
        elif etype in ("assistant/message", "assistant/attempt"):
            self.attempt = None
        elif etype == "tool/call":
            tool = self.tools.setdefault(e["callId"], new_tool(e["callId"], e["name"]))
            tool["name"], tool["arguments"], tool["callSeq"] = e["name"], e["arguments"], seq
        elif etype == "tool/result":
            call_id = str(e["message"].get("toolCallId"))
            tool = self.tools.setdefault(call_id, new_tool(call_id, (e.get("error") or {}).get("name") or "?"))
            tool["resultSeq"], tool["isError"], tool["waiting"] = seq, bool(e["message"].get("isError")), False
            self.approvals.pop(call_id, None)
        elif etype == "approval/asked":
            self.approvals[e["callId"]] = PendingApproval(callId=e["callId"], name=e["name"], reason=e.get("reason"))
        elif etype == "approval/decided":
            self.approvals.pop(e["callId"], None)
            if e["callId"] in self.tools:
                self.tools[e["callId"]]["waiting"] = False
        elif etype == "agent/inbox/spliced":
            self._splice(e)
        elif etype == "turn/start":
            self.turn = turn
        elif etype == "turn/end":
            self.turn_ends.append(TurnEndEntry(turn=turn, reason=e.get("reason"), seq=seq))
            self.attempt = None
            for tool in self.tools.values():
                tool["waiting"] = False

    def _splice(self, event: Mapping[str, Any]) -> None:
        added, removed = fold_splice(self.inbox, event)
        for entry in added:
            sub = self._sub(entry["requestId"], entry["text"])
            if sub is not None and sub["state"] in ("pending", "accepted"):
                sub["state"], sub["queuedSeq"] = "queued", event["seq"]
        for entry in removed:
            sub = self._sub(entry["requestId"], entry["text"])
            if sub is not None:
                sub["state"] = "claimed" if event.get("outcome") == "claimed" else "canceled"
                sub["claimSeq"] = event["seq"]

    def _sub(self, request_id: str | None, text: str) -> Submission | None:
        """The submission of ``request_id`` (made for ones other clients submitted)."""
        if not request_id:
            return None
        return self.submissions.setdefault(request_id, new_submission(request_id, text))
