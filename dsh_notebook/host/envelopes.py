"""Wire envelopes at the host's edge: parse what a client sends, build what the host sends.

The shapes are :mod:`dsh_notebook.wire.envelopes` (``ClientMessage`` / ``ServerMessage``).
:func:`parse_envelope` checks one client message and returns its typed model, or raises
:class:`EnvelopeError` (code ``BAD_ENVELOPE``) carrying whatever ``rpcId`` / ``streamId``
could be read, so the error can still be paired with its caller. A stream ``open`` payload is
``{"args": {...}}`` like a request's; a bare args object is accepted too. What the host sends is
built from the typed models here and serialised once (:func:`encode`, :func:`item_json`).
"""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import BaseModel, JsonValue, ValidationError

from ..errors import ErrorCode, HostError
from ..wire.base import to_json
from ..wire.envelopes import (
    MAX_ID,
    ClientMessageAdapter,
    ClientRequest,
    ResultError,
    ResultOk,
    ServerResponse,
    StreamCancel,
    StreamEnded,
    StreamError,
    StreamOpen,
    WireError,
    item_json,
)

__all__ = [
    "MAX_ID", "MAX_LINE", "ClientRequest", "RawMessage", "EnvelopeError", "StreamCancel", "StreamOpen", "decode",
    "encode", "error_of", "item_json", "parse_envelope", "response_error", "response_ok",
    "stream_end", "stream_error",
]

MAX_LINE = 8 * 1024 * 1024
_ALLOWED = {
    "client-request": {"type", "rpcId", "method", "payload"},
    "open": {"type", "streamId", "endpoint", "payload"},
    "cancel": {"type", "streamId"},
}


class EnvelopeError(HostError):
    """A message that is not a valid envelope. ``rpc_id``/``stream_id``: what could be read."""

    code: ErrorCode = "BAD_ENVELOPE"

    def __init__(self, message: str, *, rpc_id: str | None = None, stream_id: str | None = None):
        super().__init__(message)
        self.rpc_id = rpc_id
        self.stream_id = stream_id


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


RawMessage = str | bytes | dict[str, JsonValue]
"""A client message as it arrives: JSON text (str or UTF-8 bytes), or already-decoded data."""


def decode(message: RawMessage) -> dict[str, JsonValue]:
    """JSON text → an object, or :class:`EnvelopeError`. Rejects NaN/Infinity and non-objects."""
    if isinstance(message, dict):
        return message
    if isinstance(message, bytes | bytearray):
        try:
            message = bytes(message).decode("utf-8")
        except UnicodeDecodeError:
            raise EnvelopeError("the line is not UTF-8") from None
    if not isinstance(message, str):
        raise EnvelopeError(f"a message must be JSON text, got {type(message).__name__}")
    if len(message) > MAX_LINE:
        raise EnvelopeError(f"the line is longer than {MAX_LINE} characters")
    try:
        obj = json.loads(message, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise EnvelopeError(f"the line is not JSON: {str(exc)[:200]}") from None
    if not isinstance(obj, dict):
        raise EnvelopeError(f"an envelope is a JSON object, got {type(obj).__name__}")
    return obj


def _ident(obj: dict[str, JsonValue], key: str) -> str | None:
    value = obj.get(key)
    if isinstance(value, str) and 0 < len(value) <= MAX_ID:
        return value
    return None


def _check_payload(payload: Any, where: str, ids: dict[str, str | None]) -> None:
    if payload is None:
        return
    if not isinstance(payload, dict):
        raise EnvelopeError(f"{where}: payload must be an object", **ids)
    if "args" in payload:
        if len(payload) != 1:
            raise EnvelopeError(f"{where}: payload must be {{'args': {{...}}}}", **ids)
        if payload["args"] is not None and not isinstance(payload["args"], dict):
            raise EnvelopeError(f"{where}: payload.args must be an object", **ids)


def parse_envelope(message: RawMessage) -> ClientRequest | StreamOpen | StreamCancel:
    """Check one client message (type, ids, method/endpoint, payload) → its typed model."""
    obj = decode(message)
    kind = obj.get("type")  # the envelope parser itself (host side of the wire): the tag, any JSON
    ids = {"rpc_id": _ident(obj, "rpcId"), "stream_id": _ident(obj, "streamId")}
    if not isinstance(kind, str) or kind not in _ALLOWED:
        raise EnvelopeError(f"type must be one of {sorted(_ALLOWED)}, got {str(kind)[:60]!r}", **ids)
    extra = set(obj) - _ALLOWED[kind]
    if extra:
        raise EnvelopeError(f"{kind}: unexpected fields {sorted(extra)[:5]}", **ids)
    if kind == "client-request":
        if ids["rpc_id"] is None:
            raise EnvelopeError("client-request: rpcId must be a non-empty string", **ids)
        method = obj.get("method")
        if not isinstance(method, str) or not method:
            raise EnvelopeError("client-request: method must be a non-empty string", **ids)
    elif ids["stream_id"] is None:
        raise EnvelopeError(f"{kind}: streamId must be a non-empty string", **ids)
    elif kind == "open":
        endpoint = obj.get("endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise EnvelopeError("open: endpoint must be a non-empty string", **ids)
    _check_payload(obj.get("payload"), kind, ids)
    try:
        parsed: ClientRequest | StreamOpen | StreamCancel = ClientMessageAdapter.validate_python(obj)
    except ValidationError as exc:  # what the checks above let through (e.g. args not JSON data)
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or kind
        raise EnvelopeError(f"{kind}: {where}: {first.get('msg', 'invalid')}", **ids) from None
    return parsed


# --- what the host sends ---------------------------------------------------------------------------


def error_of(exc: BaseException) -> WireError:
    code = getattr(exc, "code", None) or "INTERNAL"
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return WireError.model_construct(code=str(code), message=str(message))


def response_ok(rpc_id: str | None, value: BaseModel) -> ServerResponse:
    ok = ResultOk.model_construct(value=cast(Any, value))  # a descriptor's result model (Gateway-checked)
    return ServerResponse.model_construct(rpc_id=rpc_id, result=ok)


def response_error(rpc_id: str | None, error: WireError) -> ServerResponse:
    return ServerResponse.model_construct(rpc_id=rpc_id, result=ResultError.model_construct(error=error))


def stream_error(stream_id: str, error: WireError) -> StreamError:
    return StreamError.model_construct(stream_id=stream_id, error=error)


def stream_end(stream_id: str) -> StreamEnded:
    return StreamEnded.model_construct(stream_id=stream_id)


def encode(message: BaseModel) -> str:
    """One JSON line (no newline). Non-ASCII kept; newlines inside strings are escaped by JSON."""
    return to_json(message)
