"""Session events: one discriminated union on ``type`` (DESIGN §4 — a contract).

Every event has the envelope ``seq`` (dense from 0), ``time`` (epoch ms), ``type``, its payload
fields at the top level, and optional ``sourceEventSeqs`` (provenance). Surface events
(``user/message``, ``system/message``, ``assistant/message``, ``tool/result``) may carry a
``surfaceOp``; absent means *append*. Events are built without ``seq``/``time`` and stamped by
:meth:`Session.append`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, get_args

from pydantic import Field, JsonValue, TypeAdapter

from .base import Frozen
from .codes import ErrorCode
from .messages import (
    AssistantMessage,
    SystemMessage,
    ToolMessage,
    UserMessage,
)

SURFACE_TYPES = frozenset({"user/message", "system/message", "assistant/message", "tool/result"})


class ReplaceOp(Frozen):
    """Replace the surface range ``startSeq..endSeq`` (both current surface nodes) by this event."""

    op: Literal["replace"] = "replace"
    start_seq: int
    end_seq: int


class EventBase(Frozen):
    """The fields every event has. ``seq``/``time`` are stamped by ``Session.append``."""

    __wire_required__: ClassVar[tuple[str, ...]] = ("seq", "time")
    seq: int = -1
    time: int = 0
    type: str = ""
    source_event_seqs: tuple[int, ...] | None = None


class SurfaceEventBase(EventBase):
    surface_op: ReplaceOp | None = None


# --- payload parts -----------------------------------------------------------------------------


class ErrorInfo(Frozen):
    """A coded error as it appears in events (``turn/end``, ``assistant/attempt``, ``llm/retry``).
    ``code`` is read as a string (another version's log still reads), made as an :data:`ErrorCode`."""

    code: str
    message: str
    status: int | None = None
    retry_after_ms: int | None = None

    if TYPE_CHECKING:
        def __init__(self, *, code: ErrorCode, message: str, status: int | None = None,
                     retry_after_ms: int | None = None) -> None: ...


class TurnEndReason(Frozen):
    kind: Literal["completed", "aborted", "blocked", "error", "max-tokens", "interrupted", "budget", "stuck"]
    cause: str | None = None  # aborted: user | shutdown | interrupt ; blocked: the hook's reason ;
    # budget: which budget ran out — max-steps | max-time ; stuck: the repeated call (name)
    error: ErrorInfo | None = None
    limit: int | float | None = None  # budget: the limit reached (steps, or seconds)


class Usage(Frozen):
    """Token counts; disjoint (``input_tokens`` excludes cached input)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None
    estimated: bool | None = None
    """True when the counts are an estimate, not a provider's count (the offline teaching model
    counts about four characters a token)."""


class StreamRun(Frozen):
    """A compact, timed run of stream deltas of one block (B's ``AssistantStreamRecord``).

    ``kind`` text / reasoning / tool-call runs pack consecutive deltas of one block: ``time0`` is
    the first delta's epoch ms and ``dt`` the gaps after it; ``parts`` the delta texts.
    """

    kind: Literal["text", "reasoning", "tool-call"]
    index: int
    time0: int
    dt: tuple[int, ...] = ()
    parts: tuple[str, ...] = ()
    id: str | None = None
    name: str | None = None


class ToolErrorInfo(Frozen):
    """A failed call's error on its ``tool/result``: the error's name and its code (read as a
    string, made as an :data:`ErrorCode`)."""

    name: str
    code: str

    if TYPE_CHECKING:
        def __init__(self, *, name: str, code: ErrorCode) -> None: ...


class RepairNote(Frozen):
    """One change the API-boundary pairing repair made to a request's messages."""

    kind: str  # synthetic-result | dropped-orphan-result | renamed-duplicate-call | …
    call_id: str
    index: int
    detail: str = ""


class ToolSchema(Frozen):
    """A tool definition as the model sees it."""

    name: str
    description: str
    parameters: dict[str, JsonValue]
    # an MCP tool: its server (as configured) and the tool's own name there; absent otherwise
    server: str | None = Field(default=None, exclude_if=lambda v: v is None)
    tool: str | None = Field(default=None, exclude_if=lambda v: v is None)


# --- events --------------------------------------------------------------------------------------


class TurnStart(EventBase):
    type: Literal["turn/start"] = "turn/start"
    turn: int


class TurnEnd(EventBase):
    type: Literal["turn/end"] = "turn/end"
    turn: int
    reason: TurnEndReason


class StepStart(EventBase):
    type: Literal["step/start"] = "step/start"
    turn: int
    step: int


class StepEnd(EventBase):
    type: Literal["step/end"] = "step/end"
    turn: int
    step: int


class UserMessageEvent(SurfaceEventBase):
    type: Literal["user/message"] = "user/message"
    turn: int | None = None
    message: UserMessage


class SystemMessageEvent(SurfaceEventBase):
    type: Literal["system/message"] = "system/message"
    turn: int
    step: int
    message: SystemMessage


class AssistantMessageEvent(SurfaceEventBase):
    type: Literal["assistant/message"] = "assistant/message"
    turn: int
    step: int
    message: AssistantMessage
    usage: Usage | None = None
    interrupted: bool | None = None
    stream: tuple[StreamRun, ...] | None = None
    first_byte_time: int | None = None
    """Epoch ms the provider's response head arrived (network adapters only). The request was
    sent at its ``request/frozen`` ``time``; the first delta is the earliest ``stream`` ``time0``."""


class AssistantAttempt(EventBase):
    type: Literal["assistant/attempt"] = "assistant/attempt"
    turn: int
    step: int
    attempt: int = 1
    error: ErrorInfo | None = None
    stream: tuple[StreamRun, ...] | None = None
    first_byte_time: int | None = None  # as on ``assistant/message``


class ToolCall(EventBase):
    type: Literal["tool/call"] = "tool/call"
    turn: int
    step: int
    call_id: str
    name: str
    arguments: str
    server: str | None = None  # an MCP tool: which server the call went to ...
    tool: str | None = None  # ... and the tool's name there


class ToolResult(SurfaceEventBase):
    type: Literal["tool/result"] = "tool/result"
    turn: int
    step: int
    message: ToolMessage
    error: ToolErrorInfo | None = None
    finished_time: int | None = None
    """Epoch ms the call finished, set only when earlier than this result's ``time`` (a parallel
    call whose result waited for the results before it to be committed in model order)."""
    meta: dict[str, JsonValue] | None = None  # UI facts of the call, never model-visible (python: namespace diff)


class RequestHeader(EventBase):
    type: Literal["request/header"] = "request/header"
    reason: Literal["initial", "resume", "change"]
    config: dict[str, JsonValue]
    tools: tuple[ToolSchema, ...] = ()
    endpoint: str | None = None  # the OpenAI-compatible base URL the requests went to, if any


class RequestFrozen(EventBase):
    type: Literal["request/frozen"] = "request/frozen"
    turn: int
    step: int
    attempt: int
    provider: str
    model: str
    message_seqs: tuple[int, ...]
    repairs: tuple[RepairNote, ...] = ()
    context_window: int | None = None
    """The context window in effect, when known: given by flag (``--context-window`` /
    ``DSH_CONTEXT_WINDOW``), told by the server, or the catalog's (``windowSource``). Logs
    before ``windowSource`` existed carry only an override here (else the catalog's applies)."""
    window_source: Literal["flag", "server", "catalog"] | None = None
    max_tokens: int | None = None
    """The output limit this request was sent with (``config.max_tokens`` of the request)."""
    base_request_seq: int | None = None
    """When set, ``messageSeqs`` extends the resolved ``messageSeqs`` of that earlier
    ``request/frozen`` (only the seqs added since it); see ``agent.request.resolve_message_seqs``."""


class InboxSpliced(EventBase):
    type: Literal["agent/inbox/spliced"] = "agent/inbox/spliced"
    target: Literal["next-turn", "next-step"]
    start: int
    removed_count: int = 0
    inserted: tuple[UserMessage, ...] = ()
    outcome: Literal["claimed", "canceled"] | None = None


PermissionMode = Literal["default", "accept-edits", "plan", "dont-ask", "bypass", "auto"]
"""What the agent may do without asking (issue 36; :mod:`dsh_notebook.tools.modes`): ``default``
(reads run; the rest asks), ``accept-edits`` (workspace edits run too), ``plan`` (only reads),
``dont-ask`` (what would ask is denied), ``bypass`` (everything runs; armed by
``DSH_ALLOW_BYPASS=1``). ``auto`` is the legacy ``--approve auto``: everything runs but
``notebook_insert``, which asks; it is never chosen by ``--mode``."""

ChosenMode = Literal["default", "accept-edits", "plan", "dont-ask", "bypass"]
"""The modes a person picks (``--mode``, ``%dsh mode``, the widget's selector, ``session/mode``)."""

Decider = Literal["rule", "grant", "mode", "user"]
"""What decided a call: a ``rule`` (a rules file's, a policy callable, a hook, a disabled tool),
a ``grant`` ("allow for the rest of the session"), the permission ``mode``, or a ``user``'s answer."""


class ApprovalAsked(EventBase):
    """A call waits for a person: ``mode`` the session's mode, ``decider`` what made it ask
    (``rule``: an ask rule; ``mode``: the mode asks for this kind of call)."""

    type: Literal["approval/asked"] = "approval/asked"
    call_id: str
    name: str
    reason: str | None = None
    approver: str | None = None
    mode: PermissionMode | None = None
    decider: Decider | None = None


class Grant(Frozen):
    """An "allow for the rest of the session" answer: ``tool`` calls whose command or path
    matches the glob ``pattern`` (for bash: the command prefix, e.g. ``git status *``)."""

    tool: str
    pattern: str = "*"


class ApprovalDecided(EventBase):
    """The decision on one call — every call that reaches the policy gets one: by an approver's
    answer (``by`` names who answered) or, without asking, by an approval policy (``by``:
    ``rule`` | ``session`` | ``policy``) or the permission mode (``by: "mode"``); ``rule`` names
    the rule, grant or callable that made it; ``grant`` records an "allow for the session".
    ``mode``: the session's mode when it was decided; ``decider``: ``rule`` | ``grant`` |
    ``mode`` | ``user``. An approved ``exit_plan_mode`` names the mode the work continues in
    (``nextMode``); a plan sent back names the person's ``feedback``."""

    type: Literal["approval/decided"] = "approval/decided"
    call_id: str
    name: str
    decision: Literal["allow", "deny", "cancelled"]
    by: str | None = None
    rule: str | None = None
    grant: Grant | None = None
    mode: PermissionMode | None = None
    decider: Decider | None = None
    next_mode: PermissionMode | None = None
    feedback: str | None = None


class ModeChanged(EventBase):
    """The session's permission mode is ``mode`` from here on (was ``previous``). ``by``: who
    changed it (``cli``, ``notebook``, ``widget``, a client name, ``plan`` for an approved
    ``exit_plan_mode`` — then ``callId`` names it — or ``host`` when a resume could not keep it);
    ``reason`` says why when the host chose."""

    type: Literal["mode/changed"] = "mode/changed"
    mode: PermissionMode
    previous: PermissionMode | None = None
    by: str | None = None
    call_id: str | None = None
    reason: str | None = None
    turn: int | None = None


class LlmRetry(EventBase):
    type: Literal["llm/retry"] = "llm/retry"
    turn: int | None = None
    step: int | None = None
    attempt: int
    error: ErrorInfo
    delay_ms: int


class ContextCompacted(EventBase):
    """Older surface nodes ``startSeq..endSeq`` (``replaced`` of them) were replaced by the
    summary ``user/message`` at ``summarySeq`` (its ``surfaceOp`` replace and ``sourceEventSeqs``
    name every replaced seq). ``trigger``: ``threshold`` (the estimate passed the share of
    ``contextWindow``), ``context-length`` (the provider refused the request), ``manual``.
    ``tokensBefore``/``tokensAfter``: the estimated size of the history (see
    ``agent.compaction.estimate_tokens``); ``usage``: what the summarisation request cost."""

    type: Literal["context/compacted"] = "context/compacted"
    turn: int | None = None
    summary_seq: int
    start_seq: int
    end_seq: int
    replaced: int
    trigger: Literal["threshold", "context-length", "manual"]
    tokens_before: int
    tokens_after: int
    context_window: int | None = None
    provider: str
    model: str
    usage: Usage | None = None


class SessionEndSeed(EventBase):
    type: Literal["session/end-seed"] = "session/end-seed"


class SessionForked(EventBase):
    """This session was forked from ``from_`` (wire ``from``) at its seq ``at``: events 0..at are
    that session's own, and the closers before this event ended what was open at that point."""

    type: Literal["session/forked"] = "session/forked"
    from_: str = Field(alias="from")
    at: int


DebugStage = Literal["01", "02", "03", "04", "05", "06"]
"""The six stages of seed 000, where the agent debugger can pause a run."""
EditTarget = Literal["arguments", "result", "request"]


class DebugEdit(EventBase):
    """A person changed a paused run (the agent debugger): ``before`` → ``after`` of ``target``.

    ``arguments`` (stages 02–03, ``callId``: the raw JSON string the tool runs with),
    ``result`` (04: the tool result's text), ``request`` (06: the frozen request's messages).
    ``sourceEventSeqs`` cite what was paused on (the ``tool/call`` or ``request/frozen``); what
    the edit changed cites the edit in turn (the ``tool/result``, the replacing
    ``assistant/message``, or the ``assistant/message`` that answered the edited request).
    """

    type: Literal["debug/edit"] = "debug/edit"
    stage: DebugStage
    target: EditTarget
    call_id: str | None = None
    before: JsonValue
    after: JsonValue
    by: str


class FileChange(Frozen):
    """One file a turn changed: its path, its size (after the turn; before it for a deletion),
    ``sha`` the sha256 of its content after the turn (a rewind's conflict check compares it),
    ``beforeSize`` for a modification; ``link`` for a symlink (its target); ``renamedFrom`` on an
    added file whose content a deleted file of the same turn had (a rename, still counted as both)."""

    path: str
    size: int = 0
    sha: str | None = None
    before_size: int | None = None
    link: str | None = None
    renamed_from: str | None = None  # an added file with the content of a deleted one (``mv``)


class VariableKept(Frozen):
    """A notebook variable a turn rebound, deleted or added: ``restorable`` when its value before
    the turn was kept (pickled within the cap), else ``why`` not; ``added`` names had no value."""

    name: str
    type: str | None = None
    change: Literal["added", "rebound", "deleted"] = "rebound"
    restorable: bool = False
    why: str | None = None


class CheckpointTaken(EventBase):
    """The workspace was snapshotted at the start of ``turn`` (content addressed under
    ``$DSH_HOME/checkpoints``): ``files`` / ``bytes`` covered, ``newBlobs`` / ``newBytes`` stored
    by this checkpoint (what it cost), ``unrestorable`` files over a cap or unreadable."""

    type: Literal["checkpoint/taken"] = "checkpoint/taken"
    turn: int | None = None
    snapshot: str
    cwd: str | None = None
    files: int = 0
    bytes: int = 0
    new_blobs: int | None = None
    new_bytes: int | None = None
    unrestorable: tuple[str, ...] = ()


class CheckpointChanges(EventBase):
    """The files ``turn`` changed (by any tool): from its checkpoint ``snapshot`` to ``after`` (the
    workspace at the turn's end). Lists hold at most 200 entries each; the counts are complete."""

    type: Literal["checkpoint/changes"] = "checkpoint/changes"
    turn: int
    snapshot: str
    after: str
    added: tuple[FileChange, ...] = ()
    modified: tuple[FileChange, ...] = ()
    deleted: tuple[FileChange, ...] = ()
    added_count: int | None = None
    modified_count: int | None = None
    deleted_count: int | None = None
    variables: tuple[VariableKept, ...] = ()


class RewindOutcome(Frozen):
    """What a rewind to the start of ``toTurn`` (checkpoint ``snapshot``) did: ``written`` /
    ``removed`` files, ``conflicts`` left alone (changed outside the agent since its last turn:
    by hand, by a per-file Revert), ``kept`` left alone because the user kept them, ``failed``
    (``path: CODE: why`` — ``CHECKPOINT_BLOB_MISSING``, ``CHECKPOINT_UNSAFE_PATH``,
    ``CHECKPOINT_UNRESTORABLE`` …), ``variables`` put back (``variablesNotRestored``: ``name: why``),
    ``forked`` the new session of a conversation rewind; ``rolledBack``: a step failed while
    applying, and everything the rewind had done was undone. Shared by the ``checkpoint/restored``
    and ``checkpoint/reverted`` events and the ``session/rewind`` answer."""

    to_turn: int
    snapshot: str | None = None
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    variables: tuple[str, ...] = ()
    variables_not_restored: tuple[str, ...] = ()
    forked: str | None = None
    rolled_back: bool | None = None


class CheckpointRestored(RewindOutcome, EventBase):
    """A rewind (see :class:`RewindOutcome`); ``before`` the snapshot of the workspace just
    before (a rewind can be undone), ``after`` the one just after."""

    type: Literal["checkpoint/restored"] = "checkpoint/restored"
    before: str | None = None
    after: str | None = None  # the workspace just after (later conflict checks compare with it)
    forced: bool | None = None
    by: str | None = None


class CheckpointReverted(RewindOutcome, EventBase):
    """A per-file Revert (the inspector's): ``paths`` put back as at the start of turn ``toTurn``.
    A user's decision, not the agent's: a later rewind or undo treats these paths as changed
    outside the agent (a conflict) unless its target is what they now hold."""

    type: Literal["checkpoint/reverted"] = "checkpoint/reverted"
    paths: tuple[str, ...]
    before: str | None = None
    after: str | None = None
    by: str | None = None


class CheckpointKept(EventBase):
    """A per-file Keep (the inspector's): the user keeps what turn ``turn`` did to ``paths``; a
    later rewind or undo over that turn leaves them as they are (listed as ``kept``), until a
    Revert of them."""

    type: Literal["checkpoint/kept"] = "checkpoint/kept"
    turn: int
    paths: tuple[str, ...]
    by: str | None = None


CheckpointPhase = Literal["start", "end"]


class CheckpointFailed(EventBase):
    """A warning: the checkpoint at the ``start`` or ``end`` of ``turn`` could not be taken; the
    turn went on without it (its events are all logged). ``code``: ``DISK_FULL``, ``IO_ERROR``,
    ``INTERRUPTED``, ``BAD_CWD`` …; ``message`` says what in words. Nothing partial is left in the
    store."""

    type: Literal["checkpoint/failed"] = "checkpoint/failed"
    turn: int | None = None
    phase: CheckpointPhase
    code: str
    message: str

    if TYPE_CHECKING:
        def __init__(self, *, turn: int | None = None, phase: CheckpointPhase, code: ErrorCode, message: str,
                     seq: int = -1, time: int = 0, source_event_seqs: tuple[int, ...] | None = None) -> None: ...


# --- external agents (issue 41; endpoints in wire/external.py) ----------------------------------


class ExternalClient(Frozen):
    """Who called: the MCP client's own ``clientInfo`` (``name`` ``claude-code``, ``version`` …)."""

    name: str = Field(max_length=200)
    version: str | None = Field(default=None, max_length=200)


class ExternalContent(Frozen):
    """One part of an external call's result: text (masked), or an image described (the log keeps
    its type and size, never its bytes)."""

    type: Literal["text", "image"]
    text: str | None = None
    mime_type: str | None = None
    bytes: int | None = None


class ExternalCall(EventBase):
    """An external agent's call arrived: ``tool`` with ``arguments`` (JSON text, masked),
    ``client`` and ``mcpSessionId`` (the MCP session it belongs to), ``notebook`` (its path in
    Jupyter); ``turn``: the external turn of a call that executes or writes."""

    type: Literal["external/call"] = "external/call"
    call_id: str
    tool: str
    arguments: str
    client: ExternalClient
    mcp_session_id: str | None = None
    notebook: str | None = None
    turn: int | None = None


class ExternalResult(EventBase):
    """The answer to an external call (``sourceEventSeqs``: its ``external/call``): the content
    sent back (masked), ``error`` with its code when it failed or was refused, ``meta`` facts of the
    call (the cell it wrote, the kernel's execution count …)."""

    type: Literal["external/result"] = "external/result"
    call_id: str
    tool: str
    content: tuple[ExternalContent, ...] = ()
    is_error: bool = False
    error: ErrorInfo | None = None
    turn: int | None = None
    meta: dict[str, JsonValue] | None = None



AnyEvent = (
    TurnStart
    | TurnEnd
    | StepStart
    | StepEnd
    | UserMessageEvent
    | SystemMessageEvent
    | AssistantMessageEvent
    | AssistantAttempt
    | ToolCall
    | ToolResult
    | RequestHeader
    | RequestFrozen
    | InboxSpliced
    | ApprovalAsked
    | ApprovalDecided
    | ModeChanged
    | LlmRetry
    | ContextCompacted
    | SessionEndSeed
    | SessionForked
    | DebugEdit
    | CheckpointTaken
    | CheckpointChanges
    | CheckpointRestored
    | CheckpointReverted
    | CheckpointKept
    | CheckpointFailed
    | ExternalCall
    | ExternalResult
)
"""Every session event type (for isinstance checks and annotations)."""

Event = Annotated[AnyEvent, Field(discriminator="type")]
"""The union of every session event, discriminated by ``type``."""

EventAdapter: TypeAdapter[Any] = TypeAdapter(Event)
"""Validates one event from JSON text or Python data (``EventAdapter.validate_json(line)``)."""

EVENT_TYPES: frozenset[str] = frozenset(
    cls.model_fields["type"].default for cls in get_args(AnyEvent)
)
