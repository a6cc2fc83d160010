"""Wire envelopes (DESIGN §6, seed 001 object 10): what a client sends and what the host sends.

From the client (:data:`ClientMessage`)::

    {"type":"client-request","rpcId","method","payload":{"args":{...}}}
    {"type":"open","streamId","endpoint","payload":{"args":{...}}}
    {"type":"cancel","streamId"}

From the host (:data:`ServerMessage`)::

    {"type":"server-response","rpcId","result":{"ok":true,"value":<result>}}
    {"type":"server-response","rpcId","result":{"ok":false,"error":{"code","message"}}}
    {"type":"item","streamId","value":<FollowItem | ControlItem>}
    {"type":"error","streamId","error":{"code","message"}}
    {"type":"end","streamId"}

``rpcId`` is ``null`` only on an error answering a line whose id could not be read. A payload
may also be the bare args object (``"payload":{...}``); :func:`item_json` splices item values
that are already JSON text (a session's stored event lines) without parsing them again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, JsonValue, TypeAdapter

from .base import Encoded, Frozen, ItemValue, Nullable, to_json
from .codes import ErrorCode
from .control import ControlItem
from .endpoints import UnaryResult
from .follow import FollowItem

MAX_ID = 256
WireId = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
Args = dict[str, JsonValue]


class ArgsPayload(Frozen):
    args: Args | None = None


Payload = Annotated[ArgsPayload | Args, Field(union_mode="left_to_right")]
"""``{"args": {...}}``, or the bare args object."""


def _args_of(payload: Payload | None) -> Args:
    if isinstance(payload, ArgsPayload):
        return payload.args or {}
    return payload or {}


class ClientRequest(Frozen):
    type: Literal["client-request"] = "client-request"
    rpc_id: WireId
    method: str = Field(min_length=1)
    payload: Payload | None = None

    @property
    def args(self) -> Args:
        """The named args, whichever payload form was sent (``{"args": {...}}`` or bare)."""
        return _args_of(self.payload)


class StreamOpen(Frozen):
    type: Literal["open"] = "open"
    stream_id: WireId
    endpoint: str = Field(min_length=1)
    payload: Payload | None = None

    @property
    def args(self) -> Args:
        return _args_of(self.payload)


class StreamCancel(Frozen):
    type: Literal["cancel"] = "cancel"
    stream_id: WireId


ClientMessage = Annotated[ClientRequest | StreamOpen | StreamCancel, Field(discriminator="type")]
"""Every message a client sends."""


class WireError(Frozen):
    """A coded error on the wire (:data:`~.codes.ErrorCode`: read as a string, made as a code)."""

    code: str
    message: str

    if TYPE_CHECKING:
        def __init__(self, *, code: ErrorCode, message: str) -> None: ...


class ResultOk(Frozen):
    ok: Literal[True] = True
    value: UnaryResult


class ResultError(Frozen):
    ok: Literal[False] = False
    error: WireError


class ServerResponse(Nullable):
    __nullable__: ClassVar[tuple[str, ...]] = ("rpc_id",)
    type: Literal["server-response"] = "server-response"
    rpc_id: WireId | None
    result: ResultOk | ResultError


class StreamItem(Frozen):
    type: Literal["item"] = "item"
    stream_id: WireId
    value: FollowItem | ControlItem


class StreamError(Frozen):
    type: Literal["error"] = "error"
    stream_id: WireId
    error: WireError


class StreamEnded(Frozen):
    type: Literal["end"] = "end"
    stream_id: WireId


ServerMessage = Annotated[
    ServerResponse | StreamItem | StreamError | StreamEnded, Field(discriminator="type")
]
"""Every message the host sends: responses and stream frames (items included)."""

ClientMessageAdapter: TypeAdapter[Any] = TypeAdapter(ClientMessage)
ServerMessageAdapter: TypeAdapter[Any] = TypeAdapter(ServerMessage)


# -- what a client reads: the envelope typed, the value left as JSON for the one who consumes it --
class ReadOk(Frozen):
    ok: Literal[True] = True
    value: JsonValue = None  # the endpoint's result: the Remote validates it against its model


class ReadResponse(Nullable):
    __nullable__: ClassVar[tuple[str, ...]] = ("rpc_id",)
    type: Literal["server-response"] = "server-response"
    rpc_id: WireId | None
    result: Annotated[ReadOk | ResultError, Field(discriminator="ok")]


class ReadItem(Frozen):
    type: Literal["item"] = "item"
    stream_id: WireId
    value: JsonValue  # a FollowItem / ControlItem: the client model folds (and types) it


ReadMessage = Annotated[ReadResponse | ReadItem | StreamError | StreamEnded, Field(discriminator="type")]
"""A :data:`ServerMessage` as a client reads it (one parse; values typed where they are used)."""
ReadMessageAdapter: TypeAdapter[Any] = TypeAdapter(ReadMessage)


def read_server_message(text: str | bytes) -> ReadResponse | ReadItem | StreamError | StreamEnded:
    """Parse one host message (raises ``pydantic.ValidationError`` on a malformed one)."""
    return ReadMessageAdapter.validate_json(text)  # type: ignore[no-any-return]


def item_json(stream_id: str, value: ItemValue) -> str:
    """One ``item`` frame as JSON text; the value is serialised once, or spliced if encoded."""
    body = value.json if isinstance(value, Encoded) else to_json(value)
    return f'{{"type":"item","streamId":{json.dumps(stream_id, ensure_ascii=False)},"value":{body}}}'


