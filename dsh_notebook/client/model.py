"""The Client model (seed 001 objects 5 and 39): folds follow/control frames into view state.

The JS widget implements exactly this fold; keep the two in step. State (JSON-able, camelCase
where it mirrors the wire)::

    sessionId, header        from the snapshot
    cursor                   last durable seq folded (-1: none)
    start                    the cursor the model started from (-1: from the beginning)
    events                   durable events folded, dense: events[i].seq == start + 1 + i
    messages                 display messages in seq order: {seq, turn?, role, text, ...}
    attempts                 attemptId -> {attemptId, turn, step, startedAfterSeq, text,
                             reasoning, toolCalls: {index: {id, name, arguments}}}  (streaming only)
    tools                    callId -> {callId, name, phase, status, detail?, callSeq?, resultSeq?,
                             isError?}
    status, turn, step       from status frames (and the snapshot's live part)
    queue                    this session's items from control ``queue`` frames (whole value)
    approvals                callId -> {callId, name, reason?} asked and not yet decided
    inbox                    {"next-turn": [...], "next-step": [...]} of {id, requestId?, text}:
                             the fold of ``agent/inbox/spliced`` events (like the host's Inbox)
    submissions              requestId -> {requestId, text, mode, state, rpcId?, claimSeq?,
                             seq?, error?}; state: pending (sent) → queued (spliced into the
                             inbox) → claimed (taken by a turn) → delivered (its user/message);
                             "accepted" when the RPC answer comes before the splice event;
                             rejected (the RPC failed) or canceled (removed from the inbox).
                             RequestIds seen in events from other clients are tracked too.
    turnEnds                 [{turn, reason, seq}] from turn/end events
    gap                      True when an event arrived with seq > cursor + 1 (reconnect with cursor)

Rules, per frame:

- ``snapshot``: a different sessionId resets everything. Fold each of ``events`` as below. Then
  the live part replaces live state: status/turn/step; ``attempts`` = only ``live.assistant``
  (its chunks replayed); tools phases merged from ``live.tools``; approvals from ``live.approvals``.
- ``event``: seq <= cursor → ignored (duplicate); seq > cursor + 1 → ``gap`` and ignored; else
  appended, cursor = seq, and by type: ``user/message`` / ``assistant/message`` /
  ``tool/result`` / ``system/message`` → a display message (user: ``requestId``, ``source``;
  assistant: ``text``, ``reasoning``, ``toolCalls``; tool: ``callId``, ``isError``);
  ``tool/call`` → tools[callId].callSeq; ``tool/result`` → tools[callId] phase ``result``,
  status ``done``/``error``, resultSeq; ``user/message`` with a known requestId → that
  submission ``delivered`` with its seq; ``approval/asked`` / ``approval/decided`` → approvals;
  ``turn/start`` → turn; ``turn/end`` → turnEnds; ``agent/inbox/spliced`` → ``inbox``
  (``lst[start:start+removedCount] = inserted``, ids ``i<seq>.<k>``) and the submission state
  of each inserted (queued) or removed (claimed / canceled, by ``outcome``) requestId.
- ``assistant-stream``: ``start`` creates the attempt; ``chunk`` appends ``text-delta`` to text,
  ``reasoning-delta`` to reasoning, ``block-start``/``tool-call-delta`` to toolCalls[index];
  ``end`` removes the attempt (committed: its assistant/message event carries the text;
  abandoned: nothing of it stays).
- ``tool-runtime``: tools[callId] gets name, phase, status, detail, time.
- ``status``: status, turn, step.
- control ``baseline`` / ``queue`` / ``status`` for this sessionId: queue / status replaced.
"""

from __future__ import annotations

import copy
from typing import Any

from .live import fold_control, fold_splice, fold_stream, text_of

_text = text_of


class ClientSessionModel:
    """View state of one followed session. Not thread-safe: fold under the owner's lock."""

    def __init__(self, session_id: str | None = None, *, cursor: int = -1) -> None:
        self.session_id = session_id
        self.reset(cursor)

    def reset(self, cursor: int = -1) -> None:
        self.header: dict[str, Any] | None = None
        self.start = self.cursor = cursor
        self.events: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.attempts: dict[str, dict[str, Any]] = {}
        self.tools: dict[str, dict[str, Any]] = {}
        self.status, self.turn, self.step = "idle", None, None
        self.queue: list[dict[str, Any]] = []
        self.approvals: dict[str, dict[str, Any]] = {}
        self.inbox: dict[str, list[dict[str, Any]]] = {"next-turn": [], "next-step": []}
        self.submissions: dict[str, dict[str, Any]] = getattr(self, "submissions", {})
        self.turn_ends: list[dict[str, Any]] = []
        self.gap = False
        self.frames = 0

    # -- submissions (the Client Session's pending state) ----------------------------------------
    def submit(self, request_id: str, text: str, mode: str = "queue") -> None:
        self.submissions[request_id] = {"requestId": request_id, "text": text, "mode": mode, "state": "pending"}

    def accepted(self, request_id: str, rpc_id: str | None = None) -> None:
        sub = self.submissions.setdefault(request_id, {"requestId": request_id, "state": "pending"})
        sub["rpcId"] = rpc_id
        if sub["state"] == "pending":
            sub["state"] = "accepted"

    def rejected(self, request_id: str, error: dict[str, str]) -> None:
        sub = self.submissions.setdefault(request_id, {"requestId": request_id})
        sub["state"], sub["error"] = "rejected", error

    # -- the fold -------------------------------------------------------------------------------
    def apply(self, frame: dict[str, Any]) -> None:
        """Fold one follow frame."""
        self.frames += 1
        kind = frame.get("type")
        if kind == "snapshot":
            self._snapshot(frame)
        elif kind == "event":
            self._event(frame["event"])
        elif kind == "assistant-stream":
            self._stream(frame.get("frame") or {})
        elif kind == "tool-runtime":
            f = frame.get("frame") or {}
            tool = self.tools.setdefault(f.get("callId", "?"), {"callId": f.get("callId")})
            tool.update({k: f[k] for k in ("name", "phase", "status", "detail", "time") if k in f})
        elif kind == "status":
            self.status, self.turn, self.step = frame.get("status", self.status), frame.get("turn"), frame.get("step")

    def apply_control(self, frame: dict[str, Any]) -> None:
        """Fold one control frame (only what concerns this session)."""
        queue, status = fold_control(self.session_id, frame)
        self.queue = self.queue if queue is None else queue
        self.status = status or self.status

    def _snapshot(self, frame: dict[str, Any]) -> None:
        if self.session_id is not None and frame.get("sessionId") != self.session_id:
            self.reset()
        self.session_id, self.header = frame.get("sessionId"), frame.get("header")
        self.gap = False
        for event in frame.get("events", ()):
            self._event(event)
        live = frame.get("live") or {}
        self.status, self.turn, self.step = live.get("status", "idle"), live.get("turn"), live.get("step")
        self.attempts = {}
        active = live.get("assistant")
        if active:
            self._stream({"kind": "start", **active})
            for chunk in active.get("chunks", ()):
                self._stream({"kind": "chunk", "attemptId": active["attemptId"], **chunk})
        for call_id, f in (live.get("tools") or {}).items():
            self.tools.setdefault(call_id, {"callId": call_id}).update(
                {k: f[k] for k in ("name", "phase", "status", "detail", "time") if k in f}
            )
        self.approvals = {a["callId"]: dict(a) for a in live.get("approvals", ())}

    def _event(self, event: dict[str, Any]) -> None:
        seq = event.get("seq", -1)
        if seq <= self.cursor:
            return
        if seq > self.cursor + 1:
            self.gap = True
            return
        self.events.append(event)
        self.cursor = seq
        etype, turn = event.get("type"), event.get("turn")
        msg = event.get("message") or {}
        base = {"seq": seq, "turn": turn, "role": msg.get("role")}
        if etype == "user/message":
            source = msg.get("source") or {}
            rid = source.get("requestId")
            self.messages.append({**base, "text": _text(msg), "source": source.get("kind"), "requestId": rid})
            sub = self._sub(rid, _text(msg))
            if sub is not None and source.get("kind") == "user":
                sub.update(state="delivered", seq=seq)
                sub.setdefault("claimSeq", seq)
        elif etype == "system/message":
            self.messages.append({**base, "text": _text(msg)})
        elif etype == "assistant/message":
            calls = [
                {"id": b["id"], "name": b["name"], "arguments": b["arguments"]}
                for b in msg.get("content", ()) if b.get("type") == "tool-call"
            ]
            self.messages.append({**base, "text": _text(msg), "reasoning": _text(msg, "reasoning"), "toolCalls": calls})
        elif etype == "tool/call":
            tool = self.tools.setdefault(event["callId"], {"callId": event["callId"]})
            tool.update(name=event.get("name"), callSeq=seq)
        elif etype == "tool/result":
            call_id, is_error = msg.get("toolCallId"), bool(msg.get("isError"))
            tool = self.tools.setdefault(call_id or "?", {"callId": call_id})
            tool.update(phase="result", status="error" if is_error else "done", resultSeq=seq, isError=is_error)
            self.messages.append({**base, "text": _text(msg), "callId": call_id, "name": tool.get("name"), "isError": is_error})
        elif etype == "approval/asked":
            self.approvals[event["callId"]] = {k: event.get(k) for k in ("callId", "name", "reason")}
        elif etype == "approval/decided":
            self.approvals.pop(event["callId"], None)
        elif etype == "agent/inbox/spliced":
            self._splice(event)
        elif etype == "turn/start":
            self.turn = turn
        elif etype == "turn/end":
            self.turn_ends.append({"turn": turn, "reason": event.get("reason"), "seq": seq})

    def _splice(self, event: dict[str, Any]) -> None:
        added, removed = fold_splice(self.inbox, event)
        for item in added:
            sub = self._sub(item["requestId"], str(item["text"]))
            if sub is not None and sub["state"] in ("pending", "accepted"):
                sub.update(state="queued", queuedSeq=event["seq"])
        for item in removed:
            sub = self._sub(item["requestId"], str(item["text"]))
            if sub is not None:
                claimed = event.get("outcome") == "claimed"
                sub.update(state="claimed" if claimed else "canceled", claimSeq=event["seq"])

    def _sub(self, request_id: str | None, text: str) -> dict[str, Any] | None:
        """The submission of ``request_id`` (created for ones submitted by other clients)."""
        if not request_id:
            return None
        return self.submissions.setdefault(request_id, {"requestId": request_id, "text": text, "state": "pending"})

    def _stream(self, f: dict[str, Any]) -> None:
        fold_stream(self.attempts, f)

    # -- views ----------------------------------------------------------------------------------
    def submission_outcome(self, request_id: str) -> dict[str, Any] | None:
        """How a submission ended: its turn's ``turn/end`` once it was claimed, a synthetic
        ``canceled`` end if it was removed from the inbox, ``None`` while still on its way."""
        sub = self.submissions.get(request_id)
        if sub is None:
            return None
        if sub["state"] == "canceled":
            return {"turn": None, "reason": {"kind": "aborted", "cause": "canceled before it ran"}, "seq": sub["claimSeq"]}
        if sub["state"] in ("claimed", "delivered"):
            return self.turn_end_after(sub["claimSeq"])
        return None

    def live_text(self) -> str:
        """The text of the attempt(s) streaming right now."""
        return "".join(a["text"] for a in self.attempts.values())

    def turn_end_after(self, seq: int) -> dict[str, Any] | None:
        """The first ``turn/end`` with a seq greater than ``seq``."""
        return next((t for t in self.turn_ends if t["seq"] > seq), None)

    def final_answer(self, turn: int | None = None) -> str:
        """The text of the last assistant message of ``turn`` (default: the last ended turn)."""
        if turn is None:
            if not self.turn_ends:
                return ""
            turn = self.turn_ends[-1]["turn"]
        for m in reversed(self.messages):
            if m["role"] == "assistant" and m.get("turn") == turn and m["text"]:
                return str(m["text"])
        return ""

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of the whole view state."""
        keys = ("session_id", "header", "cursor", "events", "messages", "attempts", "tools", "status",
                "turn", "step", "queue", "approvals", "inbox", "submissions", "turn_ends", "gap")
        return copy.deepcopy({k: getattr(self, k) for k in keys})
