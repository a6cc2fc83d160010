"""Remote Descriptors: the interface contract both sides share (seed 001 L2, objects 7–8).

A :class:`Descriptor` says, for one endpoint, which pydantic model its ``args`` must satisfy, what
its result looks like and whether it is a unary call or a stream. The host's Gateway dispatches
through :data:`DESCRIPTORS`; the client's :class:`~dsh_notebook.client.remote.Remote` is built from
the very same table, so the two sides cannot drift. Everything here is data: a learner can print a
descriptor (``DESCRIPTORS["session/prompt"].describe()``) and see the endpoint, the args schema and
the service method it lands on.

Wire names are camelCase (``sessionId``, ``requestId``); Python names are snake_case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, JsonValue

from ..session.events import Grant
from ..session.messages import CellRef, Frozen

Mode = Literal["queue", "steer"]
ApproveMode = Literal["auto", "ask", "deny"]
Kind = Literal["unary", "stream"]


# --- args ----------------------------------------------------------------------------------------


class SessionOptions(Frozen):
    """Per-session settings that may change while the session is live (unset: keep / default).

    ``maxSteps`` / ``maxTime``: the turn budgets (``0``: unbounded; default ``DSH_MAX_STEPS`` /
    ``DSH_MAX_TIME``); ``rules``: a JSON approval-rules file (default ``DSH_POLICY_FILE``)."""

    max_steps: int | None = None
    max_time: float | None = None
    rules: str | None = None


class CreateArgs(SessionOptions):
    cwd: str | None = None
    model: str | None = None
    approve: ApproveMode | None = None
    base_url: str | None = None


class PromptCommand(Frozen):
    """The Prompt command (seed 001 object 6): which session, which submission, how, what."""

    session_id: str
    request_id: str
    mode: Mode = "queue"
    content: str | tuple[dict[str, JsonValue], ...]
    cell: CellRef | None = None  # the notebook cell that sent it (recorded on the user message)


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
    rest of the session (logged as ``approval/decided.grant``)."""

    session_id: str
    call_id: str
    decision: Literal["allow", "deny"]
    scope: Literal["call", "session"] = "call"


class FollowArgs(Frozen):
    session_id: str
    cursor: int | None = None


# --- results -------------------------------------------------------------------------------------


class SessionCreated(Frozen):
    session_id: str
    cwd: str
    model: str
    approve: ApproveMode
    log_path: str | None = None


class Accepted(Frozen):
    accepted: bool = True


class Cancelled(Frozen):
    session_id: str
    cancelled: bool  # True when a turn was running and has now ended aborted


class QueueItem(Frozen):
    id: str
    placement: Literal["queued", "steering", "context"]
    request_id: str | None = None
    rpc_id: str | None = None
    text: str


class PendingApproval(Frozen):
    call_id: str
    name: str
    arguments: str
    reason: str | None = None


class SessionSummary(Frozen):
    session_id: str
    title: str = ""
    turns: int = 0
    last_activity: int | None = None
    event_count: int = 0
    path: str | None = None
    live: bool = False
    status: Literal["idle", "running", "saved"] = "saved"


class SessionList(Frozen):
    sessions: tuple[SessionSummary, ...]


class Resumed(Frozen):
    session_id: str
    cwd: str
    model: str
    resolution: Literal["live", "resumed"]  # what the Agent resolver did (seed 001 object 16)
    warnings: tuple[str, ...] = ()  # what loading the log had to drop or defer (a torn tail ...)


class Decided(Frozen):
    session_id: str
    call_id: str
    decision: Literal["allow", "deny"]


class Compacted(Frozen):
    """The answer of ``session/compact``: ``compacted`` false when there was nothing to compact."""

    session_id: str
    compacted: bool
    summary_seq: int | None = None
    replaced: int = 0
    tokens_before: int | None = None
    tokens_after: int | None = None


class SessionInfo(Frozen):
    session_id: str
    cwd: str
    model: str
    approve: ApproveMode
    status: Literal["idle", "running"]
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


# --- descriptors ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Descriptor:
    """One endpoint of the contract: ``endpoint`` → ``service.method`` with typed args/result."""

    endpoint: str
    args: type[BaseModel]
    result: type[BaseModel] | None
    kind: Kind
    method: str
    service: str = "sessionController"
    summary: str = ""

    @property
    def namespace(self) -> str:
        return self.endpoint.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.endpoint.split("/", 1)[1]

    def describe(self) -> dict[str, Any]:
        """The descriptor as data (what a learner prints; what the JS side could generate from)."""
        return {
            "endpoint": self.endpoint,
            "kind": self.kind,
            "service": self.service,
            "method": self.method,
            "summary": self.summary,
            "args": self.args.model_json_schema(by_alias=True),
            "result": self.result.model_json_schema(by_alias=True) if self.result else None,
        }


def _d(endpoint: str, args: type[BaseModel], result: type[BaseModel] | None, summary: str) -> Descriptor:
    kind: Kind = "stream" if result is None else "unary"
    return Descriptor(endpoint, args, result, kind, endpoint.split("/", 1)[1], summary=summary)


DESCRIPTORS: dict[str, Descriptor] = {
    d.endpoint: d
    for d in (
        _d("session/create", CreateArgs, SessionCreated, "open a new session with its Agent"),
        _d("session/prompt", PromptArgs, Accepted, "admit a Prompt command (queue or steer)"),
        _d("session/cancel", SessionRef, Cancelled, "abort the running turn (ends aborted)"),
        _d("session/list", NoArgs, SessionList, "saved and live sessions"),
        _d("session/resume", ResumeArgs, Resumed, "make a saved session live (crash repair)"),
        _d("session/approve", ApproveArgs, Decided, "answer a pending approval"),
        _d("session/info", SessionRef, SessionInfo, "a live session's state"),
        _d("session/compact", SessionRef, Compacted, "summarise the older turns into one message now"),
        _d("session/follow", FollowArgs, None, "snapshot + durable events + live frames"),
        _d("session/control", NoArgs, None, "host-wide queue and status frames"),
    )
}
"""Every endpoint of the host, by name. Streams have ``result=None`` and ``kind="stream"``."""


def dump(model: BaseModel) -> dict[str, Any]:
    """The wire form of an args or result model (camelCase, ``None`` left out)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
