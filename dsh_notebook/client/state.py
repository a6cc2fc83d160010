"""The view state of one followed session, as typed JSON: what the client fold produces.

These shapes are the contract between the two folds — :class:`~.model.ClientSessionModel` here
and ``ClientSessionModel`` in ``js/src/fold.ts`` (its ``FoldState``): the same keys, the same
values, ``null`` (never a missing key) for what is not known. ``ClientSessionModel.state()``
returns a :class:`FoldState`; the parity test compares it with the JS fold's after every item of
recorded real runs (``tests/client/test_parity.py``).
"""

from __future__ import annotations

from typing import Literal, TypedDict

from pydantic import JsonValue

from ..wire.base import dump
from ..wire.pause import PausedVariant

SubmissionState = Literal["pending", "accepted", "queued", "claimed", "delivered", "rejected", "canceled"]
Json = dict[str, JsonValue]
"""A wire object kept as received (an event, a header, a turn end reason)."""


class StreamingBlock(TypedDict):
    """One content block of the attempt in flight, rebuilt from its stream chunks."""

    index: int
    type: Literal["text", "reasoning", "tool-call"]
    text: str  # text / reasoning, or the tool call's arguments so far
    id: str | None
    name: str | None
    done: bool


class AttemptOutcome(TypedDict):
    kind: Literal["committed"]
    seq: int | None


class StreamingAttempt(TypedDict):
    """The model request streaming right now (``assistant-stream`` start → chunks → end)."""

    attemptId: str
    turn: int | None
    step: int | None
    startedAfterSeq: int | None
    blocks: list[StreamingBlock]
    chunks: int
    outcome: AttemptOutcome | None  # committed, waiting for its durable event
    lastChunkTime: int | None


class ToolPhase(TypedDict):
    phase: str
    status: str
    detail: str | None
    time: int | None


class ToolState(TypedDict):
    """One tool call: its durable facts (call, result) and its transient stage-03 phases."""

    callId: str
    name: str
    arguments: str | None
    phases: list[ToolPhase]
    waiting: bool  # waits for an approval decision
    callSeq: int | None
    resultSeq: int | None
    isError: bool | None


class PendingApproval(TypedDict):
    callId: str
    name: str
    reason: str | None


class InboxEntry(TypedDict):
    """One message in the Agent's inbox, folded from ``agent/inbox/spliced`` events."""

    id: str
    requestId: str | None
    text: str


class Submission(TypedDict):
    """A prompt on its way: pending (sent) → accepted (RPC answer) → queued (in the inbox) →
    claimed (a turn took it) → delivered (its ``user/message``); or rejected / canceled."""

    requestId: str
    text: str | None
    mode: str | None
    state: SubmissionState
    rpcId: str | None
    queuedSeq: int | None
    claimSeq: int | None
    seq: int | None
    turn: int | None
    error: Json | None


class TurnEndEntry(TypedDict):
    turn: int | None
    reason: JsonValue
    seq: int | None


class PauseState(TypedDict):
    """Where the agent debugger holds the run (a ``paused`` item), until ``resumed``."""

    stage: str
    callId: str | None
    seq: int | None
    name: str | None
    editable: str | None
    payload: Json


def pause_state(item: PausedVariant) -> PauseState:
    return PauseState(stage=item.stage, callId=item.call_id, seq=item.seq, name=item.name,
                      editable=item.editable, payload=dump(item.payload))


class FoldState(TypedDict):
    """The whole view state (JSON); ``inbox`` has the keys ``next-turn`` and ``next-step``."""

    sessionId: str | None
    header: Json | None
    start: int
    cursor: int
    events: list[Json]
    status: str
    turn: int | None
    step: int | None
    attempt: StreamingAttempt | None
    tools: dict[str, ToolState]
    approvals: dict[str, PendingApproval]
    queue: list[Json]
    inbox: dict[str, list[InboxEntry]]
    submissions: dict[str, Submission]
    turnEnds: list[TurnEndEntry]
    paused: PauseState | None
    gap: bool


def new_submission(request_id: str, text: str | None = None, mode: str | None = None) -> Submission:
    return Submission(requestId=request_id, text=text, mode=mode, state="pending", rpcId=None, queuedSeq=None,
                      claimSeq=None, seq=None, turn=None, error=None)


def new_tool(call_id: str, name: str) -> ToolState:
    return ToolState(callId=call_id, name=name, arguments=None, phases=[], waiting=False, callSeq=None,
                     resultSeq=None, isError=None)
