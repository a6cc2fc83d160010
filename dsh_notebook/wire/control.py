"""``session/control`` items: the host-wide projection of session state, whole values only.

::

    {"type":"baseline","sessions":[{"sessionId","status","queue":[QueueItem...]}]}   first, once
    {"type":"queue","sessionId","items":[QueueItem...]}                              inbox changed
    {"type":"status","sessionId","status":"idle"|"running"}                          agent status

Control ``status`` and follow ``status`` (:class:`~dsh_notebook.wire.follow.FollowStatus`) share
the tag ``"status"``: they are two vocabularies, one per stream, and a stream's items are
parsed with its own union (:data:`ControlItem` / :data:`~dsh_notebook.wire.follow.FollowItem`).
In the schema, a stream ``item`` carries either; the two never both match because payloads are
closed (control ``status`` requires ``sessionId``, which follow ``status`` does not allow).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .base import Frozen

AgentStatus = Literal["idle", "running"]
"""What an Agent is doing: running a turn or not."""


class QueueItem(Frozen):
    """One pending input of a session's Inbox (``queued`` next turn, ``steering``, ``context``)."""

    id: str
    placement: Literal["queued", "steering", "context"]
    request_id: str | None = None
    rpc_id: str | None = None
    text: str


class ControlSession(Frozen):
    session_id: str
    status: AgentStatus
    queue: tuple[QueueItem, ...] = ()


class Baseline(Frozen):
    type: Literal["baseline"] = "baseline"
    sessions: tuple[ControlSession, ...] = ()


class QueueChanged(Frozen):
    type: Literal["queue"] = "queue"
    session_id: str
    items: tuple[QueueItem, ...] = ()


class ControlStatus(Frozen):
    type: Literal["status"] = "status"
    session_id: str
    status: AgentStatus


ControlItem = Annotated[Baseline | QueueChanged | ControlStatus, Field(discriminator="type")]
"""One item of a ``session/control`` stream."""

ControlItemAdapter: TypeAdapter[Any] = TypeAdapter(ControlItem)
