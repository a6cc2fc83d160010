"""The client fold's state (seed 001 L8): the view state of one followed session, as typed JSON.

Two folds produce it — ``ClientSessionModel`` in :mod:`dsh_notebook.client.model` and the widget's
in the front end — and both read these shapes from here: they are in the schema
(``python -m dsh_notebook schema``, ``$defs/FoldState``) and so in the generated TypeScript, where
the JS fold declares nothing of its own (a field renamed here fails ``tsc`` until the JS fold
follows). ``FoldState`` is plain JSON: every key always present, ``null`` (never a missing key)
for what is not known, and wire objects (the header, the events, the queue, a turn's end reason,
the paused stage's payload) in their wire form, typed in the schema as the wire model they are
the dump of (:class:`WireForm`). The parity tests (``tests/client/test_parity.py``) fold recorded
real runs with both folds and hold every state against this schema and against each other.

The dicts are TypedDicts, not models: the Python fold updates them in place as items arrive.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, GetJsonSchemaHandler, JsonValue, TypeAdapter, with_config
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema
from typing_extensions import TypedDict

from .base import dump
from .control import AgentStatus, QueueItem
from .endpoints import Mode
from .envelopes import WireError
from .events import AnyEvent, DebugStage, EditTarget, TurnEndReason
from .frames import BlockType, Phase, RuntimeStatus
from .log import SessionHeader
from .pause import PausedVariant, PausePayload

Json = dict[str, JsonValue]
"""A wire object kept as received (an event, a header, a turn end reason)."""


class WireForm:
    """``Annotated[Json, WireForm(Model)]``: JSON that is the wire form of ``Model`` (its
    :func:`~.base.dump`). Python holds the dict; the schema, and so the TypeScript, says ``Model``."""

    def __init__(self, shape: Any) -> None:  # a model or a union of models
        schema = TypeAdapter(shape).core_schema
        ref = schema.get("ref")
        if isinstance(ref, str):  # a model: referred to (its ``$defs`` entry), as a field of a model is
            schema = core_schema.definitions_schema(core_schema.definition_reference_schema(ref), [schema])
        self.schema = schema

    def __get_pydantic_json_schema__(self, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return handler(self.schema)


HeaderJson = Annotated[Json, WireForm(SessionHeader)]
EventJson = Annotated[Json, WireForm(AnyEvent)]
QueueItemJson = Annotated[Json, WireForm(QueueItem)]
ErrorJson = Annotated[Json, WireForm(WireError)]
ReasonJson = Annotated[Json, WireForm(TurnEndReason)]
PayloadJson = Annotated[Json, WireForm(PausePayload)]

SubmissionState = Literal["pending", "accepted", "queued", "claimed", "delivered", "rejected", "canceled"]
CLOSED = ConfigDict(extra="forbid", use_attribute_docstrings=True)
"""Every shape of the state is closed in the schema, like the wire's models."""


@with_config(CLOSED)
class StreamingBlock(TypedDict):
    """One content block of the attempt in flight, rebuilt from its stream chunks."""

    index: int
    type: BlockType
    text: str
    """The text or reasoning so far, or the tool call's arguments so far."""
    id: str | None
    name: str | None
    done: bool


@with_config(CLOSED)
class AttemptOutcome(TypedDict):
    """How a streamed attempt ended, kept while its durable event has not arrived yet."""

    kind: Literal["committed"]
    seq: int | None


@with_config(CLOSED)
class StreamingAttempt(TypedDict):
    """The model request streaming right now (``assistant-stream`` start → chunks → end)."""

    attemptId: str
    turn: int | None
    step: int | None
    startedAfterSeq: int | None
    blocks: list[StreamingBlock]
    chunks: int
    outcome: AttemptOutcome | None
    """Set when the attempt ended committed and its durable event has not arrived yet."""
    lastChunkTime: int | None


@with_config(CLOSED)
class ToolPhase(TypedDict):
    """One ``tool-runtime`` frame of a call, as folded."""

    phase: Phase
    status: RuntimeStatus
    detail: str | None
    time: int | None


@with_config(CLOSED)
class ToolState(TypedDict):
    """One tool call: its durable facts (call, result) and its transient stage-03 phases."""

    callId: str
    name: str
    arguments: str | None
    phases: list[ToolPhase]
    waiting: bool
    """Waits for an approval decision."""
    callSeq: int | None
    resultSeq: int | None
    isError: bool | None


@with_config(CLOSED)
class PendingApprovalState(TypedDict):
    """A call asked about and not yet decided (``approval/asked``, or a snapshot's live approvals)."""

    callId: str
    name: str
    reason: str | None


@with_config(CLOSED)
class InboxEntry(TypedDict):
    """One message in the Agent's inbox, folded from ``agent/inbox/spliced`` events."""

    id: str
    requestId: str | None
    text: str


InboxState = TypedDict("InboxState", {"next-turn": list[InboxEntry], "next-step": list[InboxEntry]})
with_config(ConfigDict(extra="forbid", json_schema_extra={
    "description": "The Agent's inbox as folded: the messages for the next turn and for the next step."}))(InboxState)


@with_config(CLOSED)
class Submission(TypedDict):
    """A prompt on its way: pending (sent) → accepted (RPC answer) → queued (in the inbox) →
    claimed (a turn took it) → delivered (its ``user/message``); or rejected / canceled."""

    requestId: str
    text: str | None
    mode: Mode | None
    state: SubmissionState
    rpcId: str | None
    queuedSeq: int | None
    claimSeq: int | None
    seq: int | None
    turn: int | None
    error: ErrorJson | None


@with_config(CLOSED)
class TurnEndEntry(TypedDict):
    """A turn that ended (its ``turn/end``), or a submission canceled before it ran."""

    turn: int | None
    reason: ReasonJson
    seq: int | None


@with_config(CLOSED)
class PauseState(TypedDict):
    """Where the agent debugger holds the run (a ``paused`` item), until ``resumed``."""

    stage: DebugStage
    callId: str | None
    seq: int | None
    name: str | None
    editable: EditTarget | None
    payload: PayloadJson


@with_config(CLOSED)
class FoldState(TypedDict):
    """The whole view state of one followed session (what both folds' ``state()`` return)."""

    sessionId: str | None
    header: HeaderJson | None
    start: int
    """Where the fold started (-1: the session's beginning; else the seq its window starts after)."""
    cursor: int
    """The last seq folded (-1 when none)."""
    events: list[EventJson]
    """The durable events held, dense: ``events[i].seq == start + 1 + i``."""
    status: AgentStatus
    turn: int | None
    step: int | None
    attempt: StreamingAttempt | None
    tools: dict[str, ToolState]
    approvals: dict[str, PendingApprovalState]
    queue: list[QueueItemJson]
    """This session's inbox items, from control ``queue`` frames (the whole value)."""
    inbox: InboxState
    submissions: dict[str, Submission]
    """By requestId: this client's prompts, and those other clients submitted."""
    turnEnds: list[TurnEndEntry]
    paused: PauseState | None
    gap: bool
    """An event (or a snapshot) skipped seqs the fold lacks: reopen the follow from the cursor."""


def pause_state(item: PausedVariant) -> PauseState:
    return PauseState(stage=item.stage, callId=item.call_id, seq=item.seq, name=item.name,
                      editable=item.editable, payload=dump(item.payload))


def new_submission(request_id: str, text: str | None = None, mode: Mode | None = None) -> Submission:
    return Submission(requestId=request_id, text=text, mode=mode, state="pending", rpcId=None, queuedSeq=None,
                      claimSeq=None, seq=None, turn=None, error=None)


def new_tool(call_id: str, name: str) -> ToolState:
    return ToolState(callId=call_id, name=name, arguments=None, phases=[], waiting=False, callSeq=None,
                     resultSeq=None, isError=None)


def new_inbox() -> InboxState:
    return {"next-turn": [], "next-step": []}
