"""The Host Connection handler (seed 001 L3, object 11): one per client connection.

``receive(message)`` may be called from any thread (a comm handler, the stdio reader, the
in-process transport); it hops onto the host loop with ``call_soon_threadsafe`` and never blocks.
On the loop the handler checks the envelope (:func:`parse_envelope`), hands unary calls and
stream opens to the :class:`Gateway`, and sends exactly one ``server-response`` per
``client-request`` — a coded error when anything is wrong, and it keeps serving. A second call
under an rpcId still in flight is refused ``DUPLICATE_RPC_ID`` (the first is answered normally). Outgoing
messages go through ``send(text)``, which must be thread-safe and must not block (transports
queue them). Unary calls run as separate tasks, started in arrival order, so a slow resume does
not hold up the rest of the connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from pydantic import BaseModel

from ..errors import DshError, ErrorCode, HostError
from ..wire.base import ItemValue
from ..wire.envelopes import WireError
from .envelopes import (
    ClientRequest,
    EnvelopeError,
    RawMessage,
    StreamCancel,
    StreamOpen,
    decode,
    encode,
    error_of,
    item_json,
    parse_envelope,
    response_error,
    response_ok,
    stream_end,
    stream_error,
)
from .gateway import Gateway, GatewayInvocation, Tracer, TraceRecord

log = logging.getLogger(__name__)


def coded(exc: BaseException) -> WireError:
    """A coded error for the wire; unexpected exceptions become ``INTERNAL``."""
    if isinstance(exc, DshError):
        return error_of(exc)
    log.error("internal error in host call", exc_info=exc)
    return WireError.model_construct(code="INTERNAL", message=f"internal error: {type(exc).__name__}")


class _Stream:
    """The host end of one open stream: a sink the service writes frames into."""

    def __init__(self, conn: ConnectionHandler, stream_id: str, inv: GatewayInvocation) -> None:
        self.conn, self.stream_id, self.invocation = conn, stream_id, inv
        self.detach: Callable[[], None] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def item(self, value: ItemValue) -> None:
        if not self._closed:
            self.conn._send_text_safe(item_json(self.stream_id, value))

    def error(self, error: BaseException) -> None:
        if not self._closed:
            self.conn._send(stream_error(self.stream_id, coded(error)))
            self._finish()

    def end(self) -> None:
        if not self._closed:
            self.conn._send(stream_end(self.stream_id))
            self._finish()

    def _finish(self) -> None:
        self._closed = True
        self.invocation.cancel.set()
        self.conn._streams.pop(self.stream_id, None)
        if self.detach is not None:
            detach, self.detach = self.detach, None
            detach()


class ConnectionHandler:
    """Checks envelopes, dispatches through the Gateway, pairs every reply with its id."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        gateway: Gateway,
        send: Callable[[str], None],
        *,
        caller: str = "in-process",
        tracer: Tracer | None = None,
    ) -> None:
        self.loop, self.gateway, self.caller = loop, gateway, caller
        self._send_text = send
        self.tracer = tracer or Tracer()
        self._streams: dict[str, _Stream] = {}
        self._calls: set[asyncio.Task[None]] = set()
        self._in_flight: set[str] = set()  # rpcIds of unary calls not answered yet
        self.closed = False

    # -- any thread ---------------------------------------------------------------------------

    def receive(self, message: RawMessage) -> None:
        """Accept one client message from any thread; handled on the host loop."""
        if self.closed:
            return
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.handle, message)

    def refuse(self, error: EnvelopeError) -> None:
        """Answer a message the transport could not even hand over (an oversized line) with
        ``error`` — under the ``rpcId``/``streamId`` it carries, if any. Any thread."""
        if not self.closed and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._reject, TraceRecord(envelope=None), error)

    def close(self) -> None:
        """Detach every stream (never cancels a run) and cancel in-flight calls. Any thread."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._close)

    # -- host loop ----------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return bool(self._calls)

    @property
    def open_streams(self) -> list[str]:
        return list(self._streams)

    def _send(self, message: BaseModel) -> None:
        self._send_text_safe(encode(message))

    def _send_text_safe(self, text: str) -> None:
        try:
            self._send_text(text)
        except Exception:
            log.exception("transport send failed")

    def handle(self, message: RawMessage) -> None:
        """One message, on the host loop: exactly one reply path, whatever happens."""
        try:
            self._handle(message)
        except Exception as exc:  # a bug in the handler itself: still answer, keep serving
            self._send(response_error(None, coded(exc)))

    def _handle(self, message: RawMessage) -> None:
        record = TraceRecord(envelope=None)
        try:
            record.envelope = obj = decode(message)
            env = parse_envelope(obj)
        except EnvelopeError as exc:
            self._reject(record, exc)
            return
        if isinstance(env, ClientRequest):
            if env.rpc_id in self._in_flight:  # its answer would be taken for the first call's
                err = HostError(f"rpcId {env.rpc_id!r} is already in flight on this connection; "
                                "use a new rpcId per call", code="DUPLICATE_RPC_ID")
                self._reject(record, EnvelopeError(err.message, rpc_id=env.rpc_id), code=err.code)
                return
            self._in_flight.add(env.rpc_id)
            inv = GatewayInvocation(self.caller, env.method, rpc_id=env.rpc_id)
            record.invocation = inv
            task = self.loop.create_task(self._call(env, inv, record))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
        elif isinstance(env, StreamOpen):
            inv = GatewayInvocation(self.caller, env.endpoint, stream_id=env.stream_id)
            record.invocation = inv
            if env.stream_id in self._streams:
                self._reply_stream_error(record, env.stream_id, EnvelopeError("streamId already open"))
                return
            stream = _Stream(self, env.stream_id, inv)
            self._streams[env.stream_id] = stream
            task = self.loop.create_task(self._open(env, stream, record))
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
        elif isinstance(env, StreamCancel):
            found = self._streams.get(env.stream_id)
            if found is None:
                err = HostError(f"no open stream {env.stream_id!r}", code="UNKNOWN_STREAM")
                self._reply_stream_error(record, env.stream_id, err)
                return
            record.invocation = found.invocation
            found.end()
            record.verdict, record.reply = "ok", stream_end(env.stream_id)
            self.tracer.emit(record)

    def _reject(self, record: TraceRecord, exc: EnvelopeError, *, code: ErrorCode | None = None) -> None:
        if code is not None:
            exc.code = code
        if exc.stream_id is not None and exc.rpc_id is None:
            self._reply_stream_error(record, exc.stream_id, exc)
            return
        reply = response_error(exc.rpc_id, coded(exc))
        record.verdict, record.reply = exc.code, reply
        self._send(reply)
        self.tracer.emit(record)

    def _reply_stream_error(self, record: TraceRecord, stream_id: str, exc: DshError) -> None:
        reply = stream_error(stream_id, coded(exc))
        record.verdict, record.reply = exc.code, reply
        self._send(reply)
        self.tracer.emit(record)

    async def _call(self, env: ClientRequest, inv: GatewayInvocation, record: TraceRecord) -> None:
        try:
            value = await self.gateway.call(inv, env.args)
            reply = response_ok(env.rpc_id, value)
            record.verdict = "ok"
        except asyncio.CancelledError:
            reply = response_error(env.rpc_id, WireError.model_construct(code="CANCELLED", message="call cancelled"))
            record.verdict = "CANCELLED"
        except Exception as exc:
            error = coded(exc)
            reply = response_error(env.rpc_id, error)
            record.verdict = error.code
        record.reply = reply
        self._in_flight.discard(env.rpc_id)
        self._send(reply)
        self.tracer.emit(record)

    async def _open(self, env: StreamOpen, stream: _Stream, record: TraceRecord) -> None:
        try:
            detach = await self.gateway.open(stream.invocation, env.args, stream)
        except Exception as exc:
            record.verdict = coded(exc).code
            record.reply = stream_error(env.stream_id, coded(exc))
            stream.error(exc)
            self.tracer.emit(record)
            return
        if stream.closed:  # cancelled (or ended) while opening
            detach()
        else:
            stream.detach = detach
        record.verdict = "ok"
        self.tracer.emit(record)

    async def drain(self) -> None:
        """Until no unary call or stream open of this connection is in flight."""
        while self._calls:
            await asyncio.wait(set(self._calls))

    def _close(self) -> None:
        self.closed = True
        for stream in list(self._streams.values()):
            stream.end()
        for task in list(self._calls):
            task.cancel()

