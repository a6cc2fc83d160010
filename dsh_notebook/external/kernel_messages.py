"""The Jupyter messaging protocol (5.x) as the MCP server speaks it to a kernel: TypedDicts.

A message is a ``header``, a ``parent_header`` (``{}`` when it answers nothing), ``metadata``,
its ``msg_type`` and its ``content``, typed here per ``msg_type`` for the messages this package
sends or reads: ``execute_request`` / ``execute_reply``, ``kernel_info_request`` / ``_reply``,
``create_subshell_request`` / ``_reply`` (ipykernel ≥ 7's subshells), the IOPub ``status``,
``stream``, ``display_data`` / ``update_display_data``, ``execute_result`` and ``error``, and the
comm messages ``comm_open`` / ``comm_msg`` / ``comm_close``. ``msg_type`` is a literal per type,
so a check of it narrows :data:`Received` to the one message.

jupyter_client deserialises messages as untyped dicts; :func:`is_read` is where they enter:
a message of a type this package does not read (``execute_input``, ``clear_output`` …) is passed
over there, as the readers always ignored it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeGuard, get_args, get_type_hints

from pydantic import JsonValue
from typing_extensions import NotRequired, TypedDict

Channel = Literal["shell", "iopub", "control"]
"""The channels a kernel link reads (it has no stdin: ``allow_stdin`` is off)."""
MimeBundle = dict[str, JsonValue]


class Header(TypedDict):
    msg_id: str
    msg_type: str
    session: str
    username: str
    date: datetime | str
    version: str
    subshell_id: NotRequired[str | None]  # a subshell's message (ipykernel ≥ 7)


class ParentHeader(TypedDict, total=False):
    """The header of the request a message answers; ``{}`` for one that answers nothing."""

    msg_id: str
    msg_type: str
    session: str
    username: str
    date: datetime | str
    version: str
    subshell_id: str | None


# --- content, per msg_type -----------------------------------------------------------------


class ExecuteRequest(TypedDict):
    code: str
    silent: bool
    store_history: bool
    user_expressions: dict[str, str]
    allow_stdin: bool
    stop_on_error: bool


class ExecuteReply(TypedDict):
    status: Literal["ok", "error", "aborted"]
    execution_count: NotRequired[int | None]
    ename: NotRequired[str]  # an error's
    evalue: NotRequired[str]
    traceback: NotRequired[list[str]]


class KernelInfoReply(TypedDict, total=False):
    status: str
    protocol_version: str
    implementation: str
    supported_features: list[str]  # "kernel subshells" when the kernel has them


class CreateSubshellReply(TypedDict, total=False):
    status: str
    subshell_id: str


class Status(TypedDict):
    execution_state: Literal["busy", "idle", "starting", "restarting", "dead"]


class Stream(TypedDict):
    name: Literal["stdout", "stderr"]
    text: str


class DisplayData(TypedDict):
    data: MimeBundle
    metadata: dict[str, JsonValue]
    transient: NotRequired[dict[str, JsonValue]]


class ExecuteResult(DisplayData):
    execution_count: int | None


class Error(TypedDict):
    ename: str
    evalue: str
    traceback: list[str]


class CommOpen(TypedDict):
    comm_id: str
    target_name: str
    data: dict[str, JsonValue]


class CommData(TypedDict):
    """``comm_msg`` and ``comm_close``: ``data`` is the comm's own message (:mod:`dsh_notebook.wire.external_kernel`)."""

    comm_id: str
    data: dict[str, JsonValue]


class Empty(TypedDict):
    """The content of ``kernel_info_request`` and ``create_subshell_request``."""


RequestContent = ExecuteRequest | CommOpen | CommData | Empty
"""What a kernel link sends."""


# --- messages --------------------------------------------------------------------------------


class _Message(TypedDict):
    header: Header
    parent_header: ParentHeader
    metadata: dict[str, JsonValue]


class Request(_Message):
    """A message a kernel link sends (made by jupyter_client's ``Session.msg``)."""

    msg_id: str
    msg_type: str
    content: RequestContent


class ExecuteReplyMessage(_Message):
    msg_type: Literal["execute_reply"]
    content: ExecuteReply


class KernelInfoReplyMessage(_Message):
    msg_type: Literal["kernel_info_reply"]
    content: KernelInfoReply


class CreateSubshellReplyMessage(_Message):
    msg_type: Literal["create_subshell_reply"]
    content: CreateSubshellReply


class StatusMessage(_Message):
    msg_type: Literal["status"]
    content: Status


class StreamMessage(_Message):
    msg_type: Literal["stream"]
    content: Stream


class DisplayDataMessage(_Message):
    msg_type: Literal["display_data", "update_display_data"]
    content: DisplayData


class ExecuteResultMessage(_Message):
    msg_type: Literal["execute_result"]
    content: ExecuteResult


class ErrorMessage(_Message):
    msg_type: Literal["error"]
    content: Error


class CommOpenMessage(_Message):
    msg_type: Literal["comm_open"]
    content: CommOpen


class CommMessage(_Message):
    msg_type: Literal["comm_msg", "comm_close"]
    content: CommData


Reply = ExecuteReplyMessage | KernelInfoReplyMessage | CreateSubshellReplyMessage
"""A reply on the shell or control channel."""
Output = StreamMessage | DisplayDataMessage | ExecuteResultMessage | ErrorMessage
"""An IOPub message that is an output of an execution."""
Received = Reply | StatusMessage | Output | CommOpenMessage | CommMessage
"""Every message a kernel link reads."""

READ_TYPES: frozenset[str] = frozenset(
    kind for message in get_args(Received) for kind in get_args(get_type_hints(message)["msg_type"]))
"""The ``msg_type`` of every message in :data:`Received`."""


def is_output(msg: Received) -> TypeGuard[Output]:
    """Whether ``msg`` is an output of an execution (what a notebook would show under the cell)."""
    return msg["msg_type"] in ("stream", "display_data", "update_display_data", "execute_result", "error")


def is_read(msg: object) -> TypeGuard[Received]:
    """Whether ``msg`` (as jupyter_client delivers it) is one of :data:`Received`: its
    ``msg_type`` one of them, its ``content`` an object (jupyter_client checked its signature)."""
    return isinstance(msg, dict) and msg.get("msg_type") in READ_TYPES and isinstance(msg.get("content"), dict)
