"""External agents over MCP (issue 41): the events and the host endpoints of their calls.

An agent outside Jupyter (Claude Code, Codex, Cursor) drives a notebook through the MCP server
of the Jupyter Server extension (:mod:`dsh_notebook.external`). Every call it makes is two events
of the session of the notebook it touches, appended by that session's one writer (the host in
the notebook's kernel): ``external/call`` when it arrives (client, MCP session, tool, arguments
— masked as every logged text is), ``external/result`` when it is answered
(``sourceEventSeqs: [call seq]``). A call that executes or writes runs inside a turn of its own
(``turn/start`` … ``turn/end``, the external turn) with its decision (``approval/*``) and the
turn's checkpoints, so ``%dsh undo`` undoes it.

The server extension reaches that host through the kernel's ``dsh.external`` comm with the wire
envelopes; ``external/begin`` logs the call and decides it (the session's mode and rules; a
person may be asked), ``external/end`` logs the result, ``session/events`` pages the log.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from .base import Frozen
from .codes import ErrorCode
from .events import ErrorInfo, ExternalClient, ExternalContent, PermissionMode

ExternalTool = Literal[
    "list_notebooks", "read_notebook", "execute_code", "insert_cell", "edit_cell", "inspect_var", "ask_agent",
    "session_events",
]  # fmt: skip
"""The MCP tools of the notebook server (DESIGN §6.2)."""


class CellProvenance(Frozen):
    """``metadata.dsh.provenance`` of a cell an external agent inserted or edited: who (the MCP
    client), the call and the session it is logged in, the tool, and when (UTC, ISO 8601)."""

    client: ExternalClient
    call_id: str
    session_id: str
    tool: ExternalTool
    time: str


# --- endpoints -----------------------------------------------------------------------------------


class ExternalBeginArgs(Frozen):
    """``external/begin``: log an external call and decide it. ``callId`` is the server's (unique per
    call); ``filePath`` the notebook file (for the decision of an edit: inside the workspace or not)."""

    session_id: str
    call_id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    tool: ExternalTool
    arguments: str = Field(max_length=1_000_000)
    client: ExternalClient
    mcp_session_id: str | None = Field(default=None, max_length=200)
    notebook: str | None = None
    file_path: str | None = None


class ExternalBegun(Frozen):
    """The call is logged (``seq``); ``allowed``: it may run now, else ``code`` / ``reason`` say why
    not (``DENIED`` by a rule, the mode or a person; ``CANCELLED``). ``turn``: its external turn."""

    session_id: str
    call_id: str
    seq: int
    allowed: bool
    turn: int | None = None
    mode: PermissionMode | None = None
    code: ErrorCode | None = None
    reason: str | None = None


class ExternalEndArgs(Frozen):
    """``external/end``: the result of a call ``external/begin`` allowed."""

    session_id: str
    call_id: str
    content: tuple[ExternalContent, ...] = ()
    is_error: bool = False
    error: ErrorInfo | None = None
    meta: dict[str, JsonValue] | None = None


class ExternalEnded(Frozen):
    """The result is logged (``seq``); ``content`` as logged (masked): what the external agent gets."""

    session_id: str
    call_id: str
    seq: int
    content: tuple[ExternalContent, ...] = ()


class EventsArgs(Frozen):
    """``session/events``: the stored events after ``sinceSeq`` (``-1``: from the start), at most ``limit``."""

    session_id: str
    since_seq: int = Field(default=-1, ge=-1)
    limit: int = Field(default=200, ge=1, le=1000)


class EventsPage(Frozen):
    """Events as stored (masked), ``lastSeq`` of the log, ``more`` when events after these remain."""

    session_id: str
    events: tuple[dict[str, JsonValue], ...] = ()
    last_seq: int
    more: bool = False


__all__ = [
    "CellProvenance", "EventsArgs", "EventsPage", "ExternalBeginArgs", "ExternalBegun", "ExternalClient", "ExternalContent",
    "ExternalEndArgs", "ExternalEnded", "ExternalTool",
]  # fmt: skip
