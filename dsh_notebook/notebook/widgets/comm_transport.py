"""The widget's side of the seed's path (seed 001 L2–L3): anywidget custom messages ⇄ Host.

The browser's Connection sends ``{"kind":"envelope","cid","envelope"}`` custom messages (a
``client-request`` with its rpcId, a stream ``open`` or ``cancel``), typed by
:func:`~dsh_notebook.wire.comm.read_comm` (``CommEnvelope``, ``CommBye``); every front-end view has its
own connection id ``cid`` and here its own host connection (``host.connect(send)``), so a page
reload or a second view follows the session from its own cursor. Host replies and stream items
come back batched: at most one custom message per ``interval`` (50 ms) per widget, so a
200 chunks/s stream costs ~20 kernel messages per second, far below the server's IOPub limit.
A large batch (a snapshot of a long session) carries its JSON texts as binary buffers of the
custom message, its ``items`` naming them by index: no JSON escaping of megabytes in the
kernel, and no parse of them by the front end's message layer (only the widget parses them).

Thread-safety: ``handle`` may run on the kernel's main thread, on a comm subshell thread
(ipykernel 7.0–7.3 with JupyterLab's ``commsOverSubshells``), and replies arrive on the host
thread; all shared state is behind one lock, and nothing here blocks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Protocol

from pydantic import JsonValue

from ...wire.codes import ErrorCode
from ...wire.comm import CommBye, CommEnvelope, read_comm

log = logging.getLogger(__name__)


class HostConnection(Protocol):
    """What ``Host.connect`` returns (``ConnectionHandler``): thread-safe receive and close."""

    def receive(self, message: str | bytes | dict[str, JsonValue]) -> None: ...

    def close(self) -> None: ...


BUFFER_MIN = 256 * 1024
"""A batch whose texts reach this many characters travels as buffers (when the sender can)."""

SendBuffers = Callable[[dict[str, JsonValue], list[bytes]], None]

Connect = Callable[[Callable[[str], None]], HostConnection]
"""Open a host connection whose replies go to ``send(text)`` (called from any thread)."""


class FrameBatcher:
    """Coalesces outgoing envelopes per connection id into one message per interval.

    Leading edge: when nothing was sent for ``interval`` the first envelope goes out at once
    (an ``accepted`` reply is not delayed); later ones wait for the next tick.
    """

    def __init__(self, send: Callable[[dict[str, JsonValue]], None], interval: float = 0.05,
                 send_buffers: SendBuffers | None = None) -> None:
        self._send = send
        self._send_buffers = send_buffers
        self.interval = interval
        self._lock = threading.Lock()
        self._queues: dict[str, list[JsonValue]] = {}
        self._timer: threading.Timer | None = None
        self._last = 0.0
        self._closed = False
        self.messages_sent = 0
        self.envelopes_sent = 0
        #: (wall time, envelopes) of recent sends: what the benchmarks count as kernel messages
        self.sent_log: deque[tuple[float, int]] = deque(maxlen=50_000)

    def push(self, cid: str, envelope: str | dict[str, JsonValue]) -> None:
        with self._lock:
            if self._closed:
                return
            self._queues.setdefault(cid, []).append(envelope)
            if self._timer is not None:
                return
            wait = self._last + self.interval - time.monotonic()
            if wait > 0:
                self._timer = threading.Timer(wait, self.flush)
                self._timer.daemon = True
                self._timer.start()
                return
        self.flush()

    def flush(self) -> None:
        with self._lock:
            self._timer = None
            queues, self._queues = self._queues, {}
            self._last = time.monotonic()
            if self._closed:
                return
        for cid, items in queues.items():
            try:
                size = sum(len(x) for x in items if isinstance(x, str))
                if self._send_buffers is not None and size >= BUFFER_MIN:
                    buffers: list[bytes] = []
                    refs: list[JsonValue] = []
                    for x in items:
                        if isinstance(x, str):
                            refs.append(len(buffers))  # an int: the index of the buffer holding it
                            buffers.append(x.encode("utf-8"))
                        else:
                            refs.append(x)
                    self._send_buffers({"kind": "batch", "cid": cid, "items": refs}, buffers)
                else:
                    self._send({"kind": "batch", "cid": cid, "items": items})
                self.messages_sent += 1
                self.envelopes_sent += len(items)
                self.sent_log.append((time.time(), len(items)))
            except Exception:  # a closed comm must not break the host thread
                log.debug("widget batch send failed", exc_info=True)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            self._timer = None
            self._queues.clear()


class WidgetBridge:
    """Routes each front-end view's envelopes to its own host connection."""

    def __init__(self, send: Callable[[dict[str, JsonValue]], None], connect: Connect, *,
                 interval: float = 0.05, max_views: int = 8, send_buffers: SendBuffers | None = None) -> None:
        self.batcher = FrameBatcher(send, interval, send_buffers)
        self._connect = connect
        self._lock = threading.Lock()
        self._conns: OrderedDict[str, HostConnection] = OrderedDict()
        self.max_views = max_views
        self.received = 0

    @property
    def views(self) -> list[str]:
        with self._lock:
            return list(self._conns)

    def handle(self, content: object) -> None:
        """A custom message from the front end (any thread): an envelope goes to the view's host
        connection, a bye closes it, anything else is ignored."""
        message = read_comm(content)
        if isinstance(message, CommBye):
            self._drop(message.cid)
            return
        if not isinstance(message, CommEnvelope):
            return
        self.received += 1
        cid, envelope = message.cid, message.envelope
        try:
            conn = self._conn(cid)
        except Exception as exc:  # no host: answer the envelope with a coded error, keep serving
            from ...errors import DshError

            code = exc.code if isinstance(exc, DshError) else "HOST_UNAVAILABLE"
            for reply in refusal(envelope, code, str(exc)):
                self.batcher.push(cid, reply)
            return
        conn.receive(envelope)

    def _conn(self, cid: str) -> HostConnection:
        evicted: list[HostConnection] = []
        with self._lock:
            conn = self._conns.get(cid)
            if conn is not None:
                self._conns.move_to_end(cid)
                return conn
        def send(text: str) -> None:
            self.batcher.push(cid, text)

        conn = self._connect(send)
        with self._lock:
            self._conns[cid] = conn
            while len(self._conns) > self.max_views:  # views of reloaded pages never said bye
                evicted.append(self._conns.popitem(last=False)[1])
        for old in evicted:
            old.close()
        return conn

    def _drop(self, cid: str) -> None:
        with self._lock:
            conn = self._conns.pop(cid, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        with self._lock:
            conns, self._conns = list(self._conns.values()), OrderedDict()
        for conn in conns:
            conn.close()
        self.batcher.close()


def refusal(envelope: dict[str, JsonValue], code: ErrorCode, message: str) -> list[str]:
    """The coded error reply to an envelope that cannot be served (the wire's own envelopes)."""
    from ...host.envelopes import encode, response_error, stream_error
    from ...wire.base import tag
    from ...wire.envelopes import MAX_ID, WireError

    error = WireError(code=code, message=message)
    kind = tag(envelope)
    key = "rpcId" if kind == "client-request" else "streamId"
    ident = envelope.get(key)
    ident = ident if isinstance(ident, str) and 0 < len(ident) <= MAX_ID else None
    if kind == "client-request":
        return [encode(response_error(ident, error))]
    if kind == "open" and ident is not None:
        return [encode(stream_error(ident, error))]
    return []
