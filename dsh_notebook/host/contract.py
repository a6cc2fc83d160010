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
from typing import Literal

from pydantic import BaseModel, JsonValue

from ..wire.base import dump
from ..wire.endpoints import (
    Accepted,
    ApproveArgs,
    Cancelled,
    Compacted,
    CreateArgs,
    DebugArgs,
    DebugState,
    Decided,
    DiffArgs,
    FollowArgs,
    KeepArgs,
    KeptFiles,
    ModeArgs,
    ModeSet,
    NoArgs,
    PromptArgs,
    ResumeArgs,
    Resumed,
    RewindArgs,
    Rewound,
    SessionCreated,
    SessionInfo,
    SessionList,
    SessionRef,
    TurnDiff,
)
from ..wire.external import (
    EventsArgs,
    EventsPage,
    ExternalBeginArgs,
    ExternalBegun,
    ExternalEndArgs,
    ExternalEnded,
)
from ..wire.pages import Page, PageArgs

__all__ = ["DESCRIPTORS", "Descriptor", "dump"]

Kind = Literal["unary", "stream"]


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

    def describe(self) -> dict[str, JsonValue]:
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
        _d("session/mode", ModeArgs, ModeSet, "set the session's permission mode (logs mode/changed)"),
        _d("session/info", SessionRef, SessionInfo, "a live session's state"),
        _d("session/compact", SessionRef, Compacted, "summarise the older turns into one message now"),
        _d("session/debug", DebugArgs, DebugState, "breakpoints, step, continue, edit (the agent debugger)"),
        _d("session/rewind", RewindArgs, Rewound, "files / conversation / variables back to the start of a turn"),
        _d("session/keep", KeepArgs, KeptFiles, "keep what a turn did to these files (later rewinds leave them)"),
        _d("session/diff", DiffArgs, TurnDiff, "the unified diffs of the files a turn changed"),
        _d("session/events", EventsArgs, EventsPage, "a page of the stored events after a seq (masked)"),
        Descriptor("external/begin", ExternalBeginArgs, ExternalBegun, "unary", "begin", "externalCalls",
                   "log an external agent's call and decide it (mode, rules, a person)"),
        Descriptor("external/end", ExternalEndArgs, ExternalEnded, "unary", "end", "externalCalls",
                   "log the result of an external call (ends its external turn)"),
        _d("session/page", PageArgs, Page, "a page of a session's views: rows, stats, timeline, a turn, a diff, messages"),
        _d("session/follow", FollowArgs, None, "snapshot + durable events + live frames"),
        _d("session/control", NoArgs, None, "host-wide queue and status frames"),
    )
}
"""Every endpoint of the host, by name. Streams have ``result=None`` and ``kind="stream"``."""
