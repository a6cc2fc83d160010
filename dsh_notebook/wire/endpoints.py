"""Args and results of every endpoint (the Remote Descriptors' models, seed 001 L2).

``host/contract.py`` binds each endpoint to one args model and one result model (streams have
none: their items are :data:`~dsh_notebook.wire.follow.FollowItem` /
:data:`~dsh_notebook.wire.control.ControlItem`). Wire names are camelCase.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue, model_validator

from .base import Frozen, refusal, tag
from .control import AgentStatus, QueueItem
from .events import ChosenMode, DebugStage, EditTarget, Grant, PermissionMode, RewindOutcome
from .external import (
    EventsArgs,
    EventsPage,
    ExternalBeginArgs,
    ExternalBegun,
    ExternalEndArgs,
    ExternalEnded,
)
from .follow import PendingApproval
from .messages import CellRef, TextBlock
from .pages import Page, PageArgs
from .pause import AnyPausedItem

Mode = Literal["queue", "steer"]
ApproveMode = Literal["auto", "ask", "deny"]


# --- args ----------------------------------------------------------------------------------------


class SessionOptions(Frozen):
    """Per-session settings that may change while the session is live (unset: keep / default).

    ``maxSteps`` / ``maxTime``: the turn budgets (``0``: unbounded; default ``DSH_MAX_STEPS`` /
    ``DSH_MAX_TIME``); ``rules``: a JSON approval-rules file (default ``DSH_POLICY_FILE``).
    Issue 20: ``maxTokens`` the output limit of every request (default ``DSH_MAX_TOKENS``, else
    derived from the window); ``options`` request options merged into the session's (a ``null``
    value removes one); ``tools`` the tools offered (``all``, ``none`` or a comma list);
    ``maxRepeats`` identical calls answered identically tolerated (``0``: no guard); ``firstByteTimeout`` /
    ``idleTimeout`` seconds to the first chunk / between chunks of a model response.
    Issue 36: ``mode`` the permission mode (``bypass`` needs ``DSH_ALLOW_BYPASS=1`` in the host's
    environment, else ``BYPASS_NOT_ARMED``); a change is the event ``mode/changed``."""

    mode: ChosenMode | None = None
    max_steps: int | None = None
    max_time: float | None = None
    rules: str | None = None
    max_tokens: int | None = None
    options: dict[str, JsonValue] | None = None
    tools: str | None = None
    max_repeats: int | None = None
    first_byte_timeout: float | None = None
    idle_timeout: float | None = None


class CreateArgs(SessionOptions):
    cwd: str | None = None
    model: str | None = None
    approve: ApproveMode | None = None
    base_url: str | None = None


class TextPart(Frozen):
    """A text part of a prompt's content (the one kind a prompt carries today)."""

    type: Literal["text"] = "text"
    text: str


ContentPart = Annotated[TextPart | dict[str, JsonValue], Field(union_mode="left_to_right")]
"""A text part, else the part as sent (admission refuses it with ``UNSUPPORTED_CONTENT`` or
``BAD_ARGS``: only text content is supported)."""


MAX_REQUEST_ID = 200


class PromptCommand(Frozen):
    """The Prompt command (seed 001 object 6): which session, which submission, how, what.

    The one check of a prompt, on both sides (the client builds one before it sends anything; the
    host's Gateway validates what arrives): ``requestId`` 1–200 characters, the content text only
    (``UNSUPPORTED_CONTENT``) and not blank (``EMPTY_CONTENT``) — the codes ride the validation
    error (:func:`~dsh_notebook.wire.base.error_code`). :attr:`blocks` is the content as text blocks."""

    session_id: str
    request_id: str = Field(min_length=1, max_length=MAX_REQUEST_ID)
    mode: Mode = "queue"
    content: str | tuple[ContentPart, ...]
    cell: CellRef | None = None  # the notebook cell that sent it (recorded on the user message)

    @model_validator(mode="after")
    def _text_only_and_not_blank(self) -> PromptCommand:
        for i, part in enumerate(self.parts):
            if isinstance(part, TextPart):
                continue
            if tag(part) == "text":  # a text part TextPart refused: no text, or more than text
                raise refusal(code="BAD_ARGS", message=f"content[{i}] must be {{type: 'text', text: string}}")
            shown = str(part.get("type"))[:40]  # words the error only, not routing
            raise refusal(code="UNSUPPORTED_CONTENT",
                          message=f"content[{i}] has type {shown!r}; only text content is supported")
        if not any(b.text.strip() for b in self.blocks):
            raise refusal(code="EMPTY_CONTENT", message="the prompt is empty: give some text")
        return self

    @property
    def parts(self) -> tuple[ContentPart, ...]:
        return (TextPart(text=self.content),) if isinstance(self.content, str) else self.content

    @property
    def blocks(self) -> tuple[TextBlock, ...]:
        """The content as text blocks, empty ones dropped (valid: every part is text)."""
        return tuple(TextBlock(text=p.text) for p in self.parts if isinstance(p, TextPart) and p.text)


class PromptArgs(Frozen):
    request: PromptCommand


class SessionRef(Frozen):
    session_id: str


class ResumeArgs(SessionOptions):
    """Resume a saved session; ``model``/``approve``/``baseUrl`` apply only if it was not live,
    the :class:`SessionOptions` (budgets, rules) always."""

    session_id: str
    model: str | None = None
    approve: ApproveMode | None = None
    base_url: str | None = None


class NoArgs(Frozen):
    pass


class ApproveArgs(Frozen):
    """``scope: "session"`` with ``allow``: allow this tool (bash: this command prefix) for the
    rest of the session (logged as ``approval/decided.grant``). For ``exit_plan_mode``: ``allow``
    with ``mode`` (``accept-edits`` or ``default``, the default) approves the plan and the work
    continues in that mode; ``deny`` with ``feedback`` sends the plan back (keep planning)."""

    session_id: str
    call_id: str
    decision: Literal["allow", "deny"]
    scope: Literal["call", "session"] = "call"
    mode: Literal["accept-edits", "default"] | None = None
    feedback: str | None = None


class ModeArgs(Frozen):
    """``session/mode``: set the session's permission mode (a saved session is resumed first)."""

    session_id: str
    mode: ChosenMode


class DebugArgs(Frozen):
    """``session/debug``: the agent debugger of one session.

    ``break`` replaces the breakpoints (``stages``; ``[]`` clears; ``tools``: only calls of
    these tools; ``when``: only calls a condition holds for, e.g. ``name==bash and command~"rm "``,
    see :mod:`dsh_notebook.agent.breakwhen`); ``continue`` runs to the next breakpoint; ``step`` to the next stage; ``edit``
    changes the paused stage's ``target`` (``arguments`` at 02–03, ``result`` at 04, ``request``
    at 06) to ``value``; ``run-to`` pauses once at ``stage`` of ``call`` (``cK``: the K-th tool
    call of the turn, or a call id; see :mod:`dsh_notebook.agent.runto`) and, if paused,
    continues — ``RUN_TO_PASSED`` if the turn is already past it, ``BAD_RUN_TO`` for a bad target;
    ``state`` only reports."""

    session_id: str
    action: Literal["break", "continue", "step", "edit", "run-to", "state"]
    stage: DebugStage | None = None
    call: str | None = None
    stages: tuple[DebugStage, ...] | None = None
    tools: tuple[str, ...] | None = None
    when: str | None = None
    target: EditTarget | None = None
    call_id: str | None = None
    value: JsonValue = None


class FollowArgs(Frozen):
    """``cursor``: the last seq the client holds (events after it come); ``window``: hold at most
    the last ``window`` events — the snapshot then starts there (its ``start``) and the rest of
    the session is read in pages (``session/page``, :mod:`.pages`)."""

    session_id: str
    cursor: int | None = None
    window: Annotated[int, Field(ge=1)] | None = None


# --- results -------------------------------------------------------------------------------------


class SessionCreated(Frozen):
    session_id: str
    cwd: str
    model: str
    approve: ApproveMode
    log_path: str | None = None
    mode: PermissionMode | None = None


class Accepted(Frozen):
    accepted: bool = True


class Cancelled(Frozen):
    session_id: str
    cancelled: bool  # True when a turn was running and has now ended aborted


class ListedSession(Frozen):
    """One row of ``session/list``: a saved or live session."""

    session_id: str
    title: str = ""
    turns: int = 0
    last_activity: int | None = None
    event_count: int = 0
    path: str | None = None
    live: bool = False
    status: Literal["idle", "running", "saved"] = "saved"


class SessionList(Frozen):
    sessions: tuple[ListedSession, ...]


class Resumed(Frozen):
    session_id: str
    cwd: str
    model: str
    resolution: Literal["live", "resumed"]  # what the Agent resolver did (seed 001 object 16)
    warnings: tuple[str, ...] = ()  # what loading the log had to drop or defer (a torn tail ...)
    mode: PermissionMode | None = None


class Decided(Frozen):
    session_id: str
    call_id: str
    decision: Literal["allow", "deny"]


class ModeSet(Frozen):
    """``session/mode``'s answer: the mode now, the one before, and the ``mode/changed`` seq
    (``None`` when the mode was already that one)."""

    session_id: str
    mode: PermissionMode
    previous: PermissionMode
    changed_seq: int | None = None


class RunToTarget(Frozen):
    """A pending "run to": the stage and the call reference as asked (``c3`` or a call id)."""

    stage: DebugStage
    call: str


class DebugState(Frozen):
    """The debugger after a ``session/debug`` action: breakpoints, the pause (if any), and for
    an ``edit`` the seq of the ``debug/edit`` event it logged. ``run_to`` is the pending run-to
    target; ``run_to_missed`` says why the last one can no longer happen (the turn ended first,
    or it passed while the run was not being debugged) until a new one is set."""

    session_id: str
    stages: tuple[DebugStage, ...] = ()
    tools: tuple[str, ...] | None = None
    when: str | None = None
    paused: AnyPausedItem | None = None
    edit_seq: int | None = None
    run_to: RunToTarget | None = None
    run_to_missed: str | None = None


class Compacted(Frozen):
    """The answer of ``session/compact``: ``compacted`` false when there was nothing to compact."""

    session_id: str
    compacted: bool
    summary_seq: int | None = None
    replaced: int = 0
    tokens_before: int | None = None
    tokens_after: int | None = None


WindowSource = Literal["flag", "server", "catalog"]


class RequestInfo(Frozen):
    """What a live session's requests carry (issue 20): the output limit (``None``: derived from
    the window), the request options, the tools offered (``all`` / ``none`` / a comma list), the
    no-progress guard, the model timeouts, and the context window with where it came from."""

    max_tokens: int | None = None
    options: dict[str, JsonValue] = {}
    tools: str = "all"
    max_repeats: int | None = None
    first_byte_timeout: float | None = None
    idle_timeout: float | None = None
    context_window: int | None = None
    window_source: WindowSource | None = None
class RewindArgs(Frozen):
    """``session/rewind``: back to the start of ``toTurn`` (absent: the last turn — an undo).
    ``files`` (default), ``conversation`` (a fork before the turn), ``variables`` (notebook);
    ``paths``: these files alone (a per-file Revert); ``dryRun`` changes nothing; ``force``
    overwrites files changed outside the agent."""

    session_id: str
    to_turn: int | None = None
    files: bool = True
    conversation: bool = False
    variables: bool = False
    paths: tuple[str, ...] | None = None
    dry_run: bool = False
    force: bool = False


class Rewound(RewindOutcome):
    """What a rewind did (or, ``dryRun``, would do); ``restoredSeq``: its ``checkpoint/restored``
    (``checkpoint/reverted`` for a rewind of ``paths``). ``sessionId`` is the session whose
    checkpoints were used: the one asked, or — when that is the conversation a rewind forked and
    it lacks the turn — the session the rewind was made on."""

    session_id: str
    dry_run: bool = False
    forked_log: str | None = None
    restored_seq: int | None = None


class KeepArgs(Frozen):
    """``session/keep``: the user keeps what turn ``turn`` did to ``paths`` (the inspector's Keep);
    logged as ``checkpoint/kept``, which later rewinds and undos respect."""

    session_id: str
    turn: int
    paths: tuple[str, ...]


class KeptFiles(Frozen):
    """``session/keep``'s answer: the paths now kept and the seq of the ``checkpoint/kept`` event."""

    session_id: str
    turn: int
    paths: tuple[str, ...]
    kept_seq: int


class DiffArgs(Frozen):
    """``session/diff``: the unified diffs of the files turn ``turn`` changed (its start checkpoint
    against its end one); ``paths``: these files alone (default: every file it changed)."""

    session_id: str
    turn: int
    paths: tuple[str, ...] | None = None


FileDiffKind = Literal["text", "binary", "too-large", "unavailable", "same"]


class FileDiff(Frozen):
    """One file's diff: ``kind`` ``text`` (``text`` a unified diff, ``added`` / ``removed`` its
    ``+`` / ``-`` line counts), ``binary``, ``too-large`` (a side over the diff cap), ``unavailable``
    (not restorable, or its blob missing), ``same`` (a rename or a mode change: content unchanged);
    ``note`` says it in words; ``renamedFrom`` the old path of a rename."""

    path: str
    kind: FileDiffKind
    text: str = ""
    added: int = 0
    removed: int = 0
    note: str | None = None
    renamed_from: str | None = None


class TurnDiff(Frozen):
    """``session/diff``'s answer: the turn's files' diffs (in the order of its changes)."""

    session_id: str
    turn: int
    files: tuple[FileDiff, ...] = ()


class SessionInfo(Frozen):
    session_id: str
    cwd: str
    model: str
    approve: ApproveMode
    status: AgentStatus
    live: bool = True
    turn: int | None = None
    step: int | None = None
    last_seq: int
    log_path: str | None = None
    queue: tuple[QueueItem, ...] = ()
    pending_approvals: tuple[PendingApproval, ...] = ()
    max_steps: int | None = None  # the turn budgets in force (None: no limit)
    max_time: float | None = None
    rules: str | None = None  # the approval rules file's name, if any
    grants: tuple[Grant, ...] = ()  # "allow for the rest of the session" answers so far
    request: RequestInfo | None = None  # live sessions: what their requests carry
    mode: PermissionMode | None = None  # the permission mode in force (issue 36)


UnaryResult = (
    SessionCreated
    | Accepted
    | Cancelled
    | SessionList
    | Resumed
    | Decided
    | ModeSet
    | Compacted
    | DebugState
    | SessionInfo
    | Rewound
    | KeptFiles
    | TurnDiff
    | EventsPage
    | ExternalBegun
    | ExternalEnded
    | Page
)
"""Every unary endpoint's result (the ``value`` of an ok ``server-response``)."""


Stream = Literal["FollowStreamItem", "ControlStreamItem"]

ENDPOINTS: dict[str, tuple[type[Frozen], type[Frozen] | Stream]] = {
    "session/create": (CreateArgs, SessionCreated),
    "session/prompt": (PromptArgs, Accepted),
    "session/cancel": (SessionRef, Cancelled),
    "session/list": (NoArgs, SessionList),
    "session/resume": (ResumeArgs, Resumed),
    "session/approve": (ApproveArgs, Decided),
    "session/mode": (ModeArgs, ModeSet),
    "session/info": (SessionRef, SessionInfo),
    "session/compact": (SessionRef, Compacted),
    "session/debug": (DebugArgs, DebugState),
    "session/rewind": (RewindArgs, Rewound),
    "session/keep": (KeepArgs, KeptFiles),
    "session/diff": (DiffArgs, TurnDiff),
    "session/events": (EventsArgs, EventsPage),
    "external/begin": (ExternalBeginArgs, ExternalBegun),
    "external/end": (ExternalEndArgs, ExternalEnded),
    "session/page": (PageArgs, Page),
    "session/follow": (FollowArgs, "FollowStreamItem"),
    "session/control": (NoArgs, "ControlStreamItem"),
}
"""Every endpoint's args model and its result model (unary) or item union (stream, by its
schema name). ``host/contract.py``'s Descriptors bind the same models (a test checks they agree);
the schema lists this table as ``x-endpoints``."""
