"""The Client model (seed 001 objects 5 and 39): THE fold of follow and control items into view state.

Everything on the client side reads this fold — the ``%dsh`` cell rendering, stdin approvals,
``TurnResult``, the ``run`` CLI; the JS widget runs the same fold (``js/src/fold.ts``), and the
parity test checks both give the same :class:`~.state.FoldState` after every item of recorded
real runs. The state (``state()``; its shapes are the wire's, :mod:`dsh_notebook.wire.fold_state`, and so
the JS fold's, generated from them)::

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
    paused                the debugger's pause: {stage, callId, seq, name, editable, payload}, or null
    gap                   an event (or a snapshot) skipped seqs this model lacks: reopen from cursor

Rules, per item:

- ``snapshot``: another sessionId resets everything. A snapshot with ``start`` beyond the cursor
  (the follow asked for a window) drops the events held and starts there (``start`` = ``cursor`` =
  its start: nothing is missing, the rest is read in pages). Its events fold as below; a snapshot
  whose cursor is beyond what was folded sets ``gap``. The live part replaces live state: status, turn,
  step; ``attempt`` rebuilt from ``live.assistant`` (its chunks replayed); ``live.tools`` frames
  folded (not twice); ``approvals`` = ``live.approvals``.
- ``event``: seq <= cursor → ignored; seq > cursor + 1 → ``gap``, ignored; else appended, and:
  ``user/message`` from a user → its submission ``delivered`` (seq, turn); ``assistant/message``
  / ``assistant/attempt`` settle a streaming attempt; ``tool/call`` → tools[callId] (name, arguments,
  callSeq); ``tool/result`` → resultSeq, isError, not waiting, approval gone;
  ``approval/asked`` / ``approval/decided`` → approvals (decided: not waiting);
  ``agent/inbox/spliced`` → inbox, and each inserted submission ``queued``, each removed one
  ``claimed`` or ``canceled`` (by ``outcome``); ``turn/start`` → turn; ``turn/end`` → turnEnds,
  no streaming attempt, nothing waiting.
- ``assistant-stream`` / ``tool-runtime``: :mod:`.frames`. ``status``: status, turn, step.
- ``paused`` → ``paused``; ``resumed`` (and ``turn/end``, and a snapshot without one) → null.
- control ``baseline`` / ``queue`` / ``status`` of this session: queue / status replaced.
- the client's own calls: ``submit`` (pending), ``accepted`` (pending → accepted), ``rejected``.
- ``trim(keep)``: hold at most the last ``keep`` events (``start`` moves up; the rest of the state
  stays): a widget's window of a long live session.

Items are parsed into the wire's types (:data:`~dsh_notebook.wire.follow.FollowItem`,
:data:`~dsh_notebook.wire.control.ControlItem`) before they are folded: a malformed item raises
a ``ValidationError`` instead of folding half. ``events`` holds typed events; ``state()`` is JSON.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, cast

from ..wire.base import dump
from ..wire.control import (
    AgentStatus,
    Baseline,
    ControlItem,
    ControlItemAdapter,
    ControlStatus,
    QueueChanged,
)
from ..wire.endpoints import Mode
from ..wire.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    DebugEdit,
    InboxSpliced,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnStart,
    UserMessageEvent,
)
from ..wire.fold_state import (
    FoldState,
    HeaderJson,
    InboxState,
    PauseState,
    PendingApprovalState,
    QueueItemJson,
    StreamingAttempt,
    Submission,
    ToolState,
    TurnEndEntry,
    new_inbox,
    new_submission,
    new_tool,
    pause_state,
)
from ..wire.follow import (
    AssistantStreamItem,
    EventItem,
    FollowItem,
    FollowItemAdapter,
    FollowStatus,
    ResumedItem,
    Snapshot,
    ToolRuntimeItem,
)
from ..wire.pause import PausedItem, PausedVariant
from .frames import fold_chunk, fold_splice, fold_stream, fold_tool, new_attempt, text_of
from .views import ModelViews


class ClientSessionModel(ModelViews):
    """View state of one followed session. Not thread-safe: fold under the owner's lock."""

    def __init__(self, session_id: str | None = None, *, cursor: int = -1) -> None:
        self.session_id = session_id
        self.frames = 0
        self.snapshots = 0  # snapshots folded (a follow waits for the one its stream opens with)
        self.revision = 0  # bumped by every fold: views compare it to skip work
        self.reset(cursor)

    def reset(self, cursor: int = -1) -> None:
        self.header: HeaderJson | None = None
        self.start = self.cursor = cursor
        self.events: list[AnyEvent] = []
        self.status: AgentStatus = "idle"
        self.turn: int | None = None
        self.step: int | None = None
        self.attempt: StreamingAttempt | None = None
        self.tools: dict[str, ToolState] = {}
        self.approvals: dict[str, PendingApprovalState] = {}
        self.queue: list[QueueItemJson] = []
        self.inbox: InboxState = new_inbox()
        self.submissions: dict[str, Submission] = {}
        self.turn_ends: list[TurnEndEntry] = []
        self.paused: PauseState | None = None
        self.gap = False

    def state(self) -> FoldState:
        """A deep copy of the whole view state (the JSON the JS fold's ``state()`` equals)."""
        return copy.deepcopy(FoldState(
            sessionId=self.session_id, header=self.header, start=self.start, cursor=self.cursor,
            events=[dump(e) for e in self.events], status=self.status, turn=self.turn, step=self.step,
            attempt=self.attempt, tools=self.tools, approvals=self.approvals, queue=self.queue, inbox=self.inbox,
            submissions=self.submissions, turnEnds=self.turn_ends, paused=self.paused, gap=self.gap,
        ))

    # -- the client's own submissions -----------------------------------------------------------
    def submit(self, request_id: str, text: str, mode: Mode = "queue") -> None:
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
    def apply(self, item: FollowItem | Mapping[str, Any]) -> None:
        """Fold one follow item (wire data is parsed into its type first)."""
        typed = FollowItemAdapter.validate_python(item) if isinstance(item, Mapping) else item
        self.frames += 1
        self.revision += 1
        if isinstance(typed, Snapshot):
            self._snapshot(typed)
        elif isinstance(typed, EventItem):
            self._event(typed.event)
        elif isinstance(typed, AssistantStreamItem):
            self.attempt = fold_stream(self.attempt, typed.frame, self.cursor)
        elif isinstance(typed, ToolRuntimeItem):
            fold_tool(self.tools, typed.frame)
        elif isinstance(typed, FollowStatus):
            self.status, self.turn, self.step = typed.status, typed.turn, typed.step
        elif isinstance(typed, PausedItem):
            self.paused = pause_state(cast(PausedVariant, typed))  # every PausedItem is a variant
        elif isinstance(typed, ResumedItem):
            self.paused = None

    def trim(self, keep: int) -> None:
        """Hold at most the last ``keep`` events (the window of a widget on a long session)."""
        drop = len(self.events) - max(0, keep)
        if drop > 0:
            del self.events[:drop]
            self.start += drop
            self.revision += 1

    def apply_control(self, item: ControlItem | Mapping[str, Any]) -> None:
        """Fold one control item (only what concerns this session)."""
        typed = ControlItemAdapter.validate_python(item) if isinstance(item, Mapping) else item
        self.revision += 1
        if isinstance(typed, Baseline):
            for entry in typed.sessions:
                if entry.session_id == self.session_id:
                    self.queue, self.status = [dump(q) for q in entry.queue], entry.status
        elif isinstance(typed, QueueChanged) and typed.session_id == self.session_id:
            self.queue = [dump(q) for q in typed.items]
        elif isinstance(typed, ControlStatus) and typed.session_id == self.session_id:
            self.status = typed.status

    def _snapshot(self, item: Snapshot) -> None:
        self.snapshots += 1
        if self.session_id is not None and item.session_id != self.session_id:
            self.reset()
        self.session_id, self.header = item.session_id, dump(item.header)
        self.gap = False
        if item.start is not None and item.start > self.cursor:
            self.events = []  # a window: it begins after ``start``, nothing is missing before it
            self.start = self.cursor = item.start
        for event in item.events:
            self._event(event)
        if item.cursor > self.cursor:
            self.gap = True  # the snapshot skipped events this model lacks
        run_state = item.live
        self.status, self.turn, self.step = run_state.status, run_state.turn, run_state.step
        self.attempt = None
        if run_state.assistant is not None:
            self.attempt = attempt = new_attempt(run_state.assistant)
            for entry in run_state.assistant.chunks:
                fold_chunk(attempt, entry.chunk)
                attempt["lastChunkTime"] = entry.time
        for frame in run_state.tools.values():
            fold_tool(self.tools, frame, again=True)
        self.approvals = {a.call_id: PendingApprovalState(callId=a.call_id, name=a.name, reason=a.reason) for a in run_state.approvals}
        self.paused = pause_state(run_state.paused) if run_state.paused is not None else None

    def _event(self, e: AnyEvent) -> None:
        seq = e.seq
        if seq <= self.cursor:
            return
        if seq > self.cursor + 1:
            self.gap = True
            return
        self.events.append(e)
        self.cursor = seq
        if isinstance(e, UserMessageEvent):
            source = e.message.source
            sub = self._sub(source.request_id, text_of(e.message))
            if sub is not None and source.kind == "user":
                sub["state"], sub["seq"], sub["turn"] = "delivered", seq, e.turn
                if sub["claimSeq"] is None:
                    sub["claimSeq"] = seq
        elif isinstance(e, AssistantMessageEvent | AssistantAttempt):
            self.attempt = None  # the durable event settles the streaming attempt
        elif isinstance(e, ToolCall):
            tool = self.tools.setdefault(e.call_id, new_tool(e.call_id, e.name))
            tool["name"], tool["arguments"], tool["callSeq"] = e.name, e.arguments, seq
        elif isinstance(e, DebugEdit) and e.target == "arguments" and e.call_id in self.tools:
            # the debugger changed what the call runs with (02–03): approvals and views show that
            after = e.after
            self.tools[e.call_id]["arguments"] = after if isinstance(after, str) else json.dumps(after, separators=(",", ":"))
        elif isinstance(e, ToolResult):
            call_id = e.message.tool_call_id
            tool = self.tools.setdefault(call_id, new_tool(call_id, e.error.name if e.error else "?"))
            tool["resultSeq"], tool["isError"], tool["waiting"] = seq, e.message.is_error, False
            self.approvals.pop(call_id, None)
        elif isinstance(e, ApprovalAsked):
            self.approvals[e.call_id] = PendingApprovalState(callId=e.call_id, name=e.name, reason=e.reason)
        elif isinstance(e, ApprovalDecided):
            self.approvals.pop(e.call_id, None)
            if e.call_id in self.tools:
                self.tools[e.call_id]["waiting"] = False
        elif isinstance(e, InboxSpliced):
            self._splice(e)
        elif isinstance(e, TurnStart):
            self.turn = e.turn
        elif isinstance(e, TurnEnd):
            self.turn_ends.append(TurnEndEntry(turn=e.turn, reason=dump(e.reason), seq=seq))
            self.attempt, self.paused = None, None
            for tool in self.tools.values():
                tool["waiting"] = False

    def _splice(self, event: InboxSpliced) -> None:
        added, removed = fold_splice(self.inbox, event)
        for entry in added:
            sub = self._sub(entry["requestId"], entry["text"])
            if sub is not None and sub["state"] in ("pending", "accepted"):
                sub["state"], sub["queuedSeq"] = "queued", event.seq
        for entry in removed:
            sub = self._sub(entry["requestId"], entry["text"])
            if sub is not None:
                sub["state"] = "claimed" if event.outcome == "claimed" else "canceled"
                sub["claimSeq"] = event.seq

    def _sub(self, request_id: str | None, text: str) -> Submission | None:
        """The submission of ``request_id`` (made for ones other clients submitted)."""
        if not request_id:
            return None
        return self.submissions.setdefault(request_id, new_submission(request_id, text))
