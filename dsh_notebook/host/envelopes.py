"""Wire envelopes (DESIGN §6, seed 001 object 10): parse what a client sends, build what we send.

From the client::

    {"type":"client-request","rpcId":"rpc_7","method":"session/prompt","payload":{"args":{...}}}
    {"type":"open","streamId":"f1","endpoint":"session/follow","payload":{"args":{...}}}
    {"type":"cancel","streamId":"f1"}

From the host::

    {"type":"server-response","rpcId":"rpc_7","result":{"ok":true,"value":{...}}}
    {"type":"server-response","rpcId":"rpc_7","result":{"ok":false,"error":{"code","message"}}}
    {"type":"item","streamId":"f1","value":{...}}
    {"type":"error","streamId":"f1","error":{"code","message"}}
    {"type":"end","streamId":"f1"}

A stream ``open`` payload is ``{"args": {...}}`` like a request's; a bare args object is accepted
too. :func:`parse_envelope` raises :class:`EnvelopeError` (code ``BAD_ENVELOPE``) carrying whatever
``rpcId`` / ``streamId`` could be read, so the error can still be paired with its caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import HostError

MAX_LINE = 8 * 1024 * 1024
MAX_ID = 256
_ALLOWED = {
    "client-request": {"type", "rpcId", "method", "payload"},
    "open": {"type", "streamId", "endpoint", "payload"},
    "cancel": {"type", "streamId"},
}


class EnvelopeError(HostError):
    """A message that is not a valid envelope. ``rpc_id``/``stream_id``: what could be read."""

    code = "BAD_ENVELOPE"

    def __init__(self, message: str, *, rpc_id: str | None = None, stream_id: str | None = None):
        super().__init__(message)
        self.rpc_id = rpc_id
        self.stream_id = stream_id


@dataclass(frozen=True)
class ClientRequest:
    rpc_id: str
    method: str
    args: dict[str, Any]
    type: str = "client-request"


@dataclass(frozen=True)
class StreamOpen:
    stream_id: str
    endpoint: str
    args: dict[str, Any]
    type: str = "open"


@dataclass(frozen=True)
class StreamCancel:
    stream_id: str
    type: str = "cancel"


Envelope = ClientRequest | StreamOpen | StreamCancel


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(message: str | bytes | dict[str, Any]) -> dict[str, Any]:
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


def _ident(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if isinstance(value, str) and 0 < len(value) <= MAX_ID:
        return value
    return None


def _args(payload: Any, where: str, **ids: str | None) -> dict[str, Any]:
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise EnvelopeError(f"{where}: payload must be an object", **ids)  # type: ignore[arg-type]
    if "args" in payload:
        if len(payload) != 1:
            raise EnvelopeError(f"{where}: payload must be {{'args': {{...}}}}", **ids)  # type: ignore[arg-type]
        args = payload["args"]
        if args is None:
            return {}
        if not isinstance(args, dict):
            raise EnvelopeError(f"{where}: payload.args must be an object", **ids)  # type: ignore[arg-type]
        return args
    return payload


def parse_envelope(message: str | bytes | dict[str, Any]) -> Envelope:
    """Check one client message's shell: type, ids, method/endpoint, payload shape."""
    obj = decode(message)
    kind = obj.get("type")
    rpc_id, stream_id = _ident(obj, "rpcId"), _ident(obj, "streamId")
    ids = {"rpc_id": rpc_id, "stream_id": stream_id}
    if not isinstance(kind, str) or kind not in _ALLOWED:
        raise EnvelopeError(
            f"type must be one of {sorted(_ALLOWED)}, got {str(kind)[:60]!r}", **ids
        )
    extra = set(obj) - _ALLOWED[kind]
    if extra:
        raise EnvelopeError(f"{kind}: unexpected fields {sorted(extra)[:5]}", **ids)
    if kind == "client-request":
        if rpc_id is None:
            raise EnvelopeError("client-request: rpcId must be a non-empty string", **ids)
        method = obj.get("method")
        if not isinstance(method, str) or not method:
            raise EnvelopeError("client-request: method must be a non-empty string", **ids)
        return ClientRequest(rpc_id, method, _args(obj.get("payload"), "client-request", **ids))
    if stream_id is None:
        raise EnvelopeError(f"{kind}: streamId must be a non-empty string", **ids)
    if kind == "cancel":
        return StreamCancel(stream_id)
    endpoint = obj.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        raise EnvelopeError("open: endpoint must be a non-empty string", **ids)
    return StreamOpen(stream_id, endpoint, _args(obj.get("payload"), "open", **ids))


# --- what the host sends ---------------------------------------------------------------------------


def error_dict(exc: BaseException) -> dict[str, str]:
    code = getattr(exc, "code", None) or "INTERNAL"
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return {"code": str(code), "message": str(message)}


def response_ok(rpc_id: str | None, value: Any) -> dict[str, Any]:
    return {"type": "server-response", "rpcId": rpc_id, "result": {"ok": True, "value": value}}


def response_error(rpc_id: str | None, error: dict[str, str]) -> dict[str, Any]:
    return {"type": "server-response", "rpcId": rpc_id, "result": {"ok": False, "error": error}}


def stream_item(stream_id: str, value: Any) -> dict[str, Any]:
    return {"type": "item", "streamId": stream_id, "value": value}


def stream_error(stream_id: str, error: dict[str, str]) -> dict[str, Any]:
    return {"type": "error", "streamId": stream_id, "error": error}


def stream_end(stream_id: str) -> dict[str, Any]:
    return {"type": "end", "streamId": stream_id}


def encode(message: dict[str, Any]) -> str:
    """One JSON line (no newline). Non-ASCII kept; newlines inside strings are escaped by JSON."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
