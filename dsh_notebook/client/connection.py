"""Connection / RPC caller (seed 001 L2, object 9): rpcId pairing and stream subscriptions.

A :class:`Connection` owns a :class:`Transport` (in-process now, a comm or a subprocess's stdio
elsewhere) that moves JSON lines both ways. It mints ``rpcId``\\ s (``rpc_1``, ``rpc_2`` …),
sends ``client-request`` envelopes and pairs each ``server-response`` with the call that waits
for it; it mints ``streamId``\\ s for ``open`` and routes ``item`` / ``error`` / ``end`` to the
subscription's callbacks. It is thread-safe: ``call()`` blocks any thread except the delivery
thread (where it would deadlock and raises instead), ``acall()`` awaits from any event loop.
Stream callbacks run on the transport's delivery thread, in arrival order: keep them short.
``exchanges`` keeps the last envelopes sent and the responses they were paired with.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import JsonValue

from ..errors import HostError
from ..wire.base import dump, to_json
from ..wire.codes import received
from ..wire.envelopes import (
    Args,
    ArgsPayload,
    ClientRequest,
    ReadItem,
    ReadOk,
    ReadResponse,
    StreamCancel,
    StreamError,
    StreamOpen,
    read_server_message,
)

log = logging.getLogger(__name__)


class Transport(Protocol):
    """Moves JSON text lines between a client and a host."""

    def start(self, on_message: Callable[[str], None]) -> None: ...
    def send(self, text: str) -> None: ...
    def close(self) -> None: ...


@dataclass
class TurnCall:
    """One unary call as it went over the wire (what a learner inspects)."""

    rpc_id: str
    request: dict[str, JsonValue]
    response: dict[str, JsonValue] | None = None
    future: Future[Any] = field(default_factory=Future, repr=False)


class Subscription:
    """The client end of one stream. ``close()`` sends ``cancel`` (never cancels a run)."""

    def __init__(
        self,
        conn: Connection,
        stream_id: str,
        endpoint: str,
        on_item: Callable[[Any], None],
        on_error: Callable[[HostError], None] | None,
        on_end: Callable[[], None] | None,
    ) -> None:
        self.conn, self.stream_id, self.endpoint = conn, stream_id, endpoint
        self.on_item, self.on_error, self.on_end = on_item, on_error, on_end
        self.ended = threading.Event()
        self.error: HostError | None = None

    @property
    def closed(self) -> bool:
        return self.ended.is_set()

    def close(self) -> None:
        if not self.ended.is_set():
            self.conn._send(StreamCancel(stream_id=self.stream_id))

    def _finish(self, error: HostError | None) -> None:
        self.error = error
        self.ended.set()
        try:
            if error is not None and self.on_error is not None:
                self.on_error(error)
            elif self.on_end is not None:
                self.on_end()
        except Exception:
            log.exception("stream end callback failed")


class Connection:
    """rpcId pairing and stream routing over one transport."""

    def __init__(self, transport: Transport, *, history: int = 200) -> None:
        self.transport = transport
        self._lock = threading.Lock()
        self._rpc_ids = itertools.count(1)
        self._stream_ids = itertools.count(1)
        self._pending: dict[str, TurnCall] = {}
        self._streams: dict[str, Subscription] = {}
        self.exchanges: deque[TurnCall] = deque(maxlen=history)
        self.unpaired: deque[dict[str, JsonValue]] = deque(maxlen=50)  # responses nobody waited for
        self._delivery_thread: int | None = None
        self.closed = False
        transport.start(self._on_message)

    # -- unary calls ----------------------------------------------------------------------------
    def request(self, endpoint: str, args: Args) -> TurnCall:
        """Send one ``client-request``; the returned exchange's ``future`` gets the value."""
        if self.closed:
            raise HostError("the connection is closed", code="CLOSED")
        with self._lock:
            rpc_id = f"rpc_{next(self._rpc_ids)}"
            envelope = ClientRequest(rpc_id=rpc_id, method=endpoint, payload=ArgsPayload(args=args))
            exchange = TurnCall(rpc_id, dump(envelope))
            self._pending[rpc_id] = exchange
            self.exchanges.append(exchange)
        self._send(envelope)
        return exchange

    def call(self, endpoint: str, args: Args, *, timeout: float | None = None) -> Any:
        """Blocking call; returns the result value or raises :class:`HostError` with its code."""
        if threading.get_ident() == self._delivery_thread:
            raise HostError("a blocking call from a stream callback would deadlock; use request()", code="DEADLOCK")
        exchange = self.request(endpoint, args)
        try:
            return exchange.future.result(timeout)
        except TimeoutError:
            raise HostError(f"{endpoint} ({exchange.rpc_id}) got no response in {timeout}s", code="TIMEOUT") from None

    async def acall(self, endpoint: str, args: Args) -> Any:
        """The same call from asyncio code on any loop; never blocks that loop."""
        return await asyncio.wrap_future(self.request(endpoint, args).future)

    # -- streams --------------------------------------------------------------------------------
    def open_stream(
        self,
        endpoint: str,
        args: Args,
        on_item: Callable[[Any], None],
        *,
        on_error: Callable[[HostError], None] | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> Subscription:
        with self._lock:
            stream_id = f"st_{next(self._stream_ids)}"
            sub = Subscription(self, stream_id, endpoint, on_item, on_error, on_end)
            self._streams[stream_id] = sub
        self._send(StreamOpen(stream_id=stream_id, endpoint=endpoint, payload=ArgsPayload(args=args)))
        return sub

    # -- plumbing -------------------------------------------------------------------------------
    def _send(self, message: ClientRequest | StreamOpen | StreamCancel) -> None:
        self.transport.send(to_json(message))

    def _on_message(self, text: str) -> None:
        self._delivery_thread = threading.get_ident()
        try:
            msg = read_server_message(text)
        except Exception:
            log.warning("unreadable message from host: %.200s", text)
            return
        if isinstance(msg, ReadResponse):
            with self._lock:
                exchange = self._pending.pop(msg.rpc_id or "", None)
            response = dump(msg)
            if exchange is None:
                self.unpaired.append(response)
                return
            exchange.response = response
            if isinstance(msg.result, ReadOk):
                exchange.future.set_result(msg.result.value)
            else:
                exchange.future.set_exception(HostError(msg.result.error.message, code=received(msg.result.error.code)))
            return
        sub = self._streams.get(msg.stream_id)
        if sub is None:
            return
        if isinstance(msg, ReadItem):
            try:
                sub.on_item(msg.value)
            except Exception:
                log.exception("stream callback failed on %s", sub.stream_id)
            return
        with self._lock:
            self._streams.pop(sub.stream_id, None)
        sub._finish(HostError(msg.error.message, code=received(msg.error.code)) if isinstance(msg, StreamError) else None)

    def close(self) -> None:
        """Close every stream and fail every pending call with ``CLOSED``; close the transport."""
        if self.closed:
            return
        self.closed = True
        for sub in list(self._streams.values()):
            sub.close()
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
            streams, self._streams = list(self._streams.values()), {}
        for exchange in pending:
            if not exchange.future.done():
                exchange.future.set_exception(HostError("the connection closed", code="CLOSED"))
        for sub in streams:
            if not sub.closed:
                sub._finish(None)
        self.transport.close()
