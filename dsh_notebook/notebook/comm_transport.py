"""The widget's side of the seed's path (seed 001 L2–L3): anywidget custom messages ⇄ Host.

The browser's Connection sends ``{"kind":"envelope","cid","envelope"}`` custom messages (a
``client-request`` with its rpcId, a stream ``open`` or ``cancel``); every front-end view has its
own connection id ``cid`` and here its own host connection (``host.connect(send)``), so a page
reload or a second view follows the session from its own cursor. Host replies and stream items
come back batched: at most one custom message per ``interval`` (50 ms) per widget, so a
200 chunks/s stream costs ~20 kernel messages per second, far below the server's IOPub limit.

Thread-safety: ``handle`` may run on the kernel's main thread, on a comm subshell thread
(ipykernel 7.0–7.3 with JupyterLab's ``commsOverSubshells``), and replies arrive on the host
thread; all shared state is behind one lock, and nothing here blocks.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)


class HostConnection(Protocol):
    """What ``Host.connect`` returns (``ConnectionHandler``): thread-safe receive and close."""

    def receive(self, message: str | bytes | dict[str, Any]) -> None: ...

    def close(self) -> None: ...


Connect = Callable[[Callable[[str], None]], HostConnection]
"""Open a host connection whose replies go to ``send(text)`` (called from any thread)."""


class FrameBatcher:
    """Coalesces outgoing envelopes per connection id into one message per interval.

    Leading edge: when nothing was sent for ``interval`` the first envelope goes out at once
    (an ``accepted`` reply is not delayed); later ones wait for the next tick.
    """

    def __init__(self, send: Callable[[dict[str, Any]], None], interval: float = 0.05) -> None:
        self._send = send
        self.interval = interval
        self._lock = threading.Lock()
        self._queues: dict[str, list[Any]] = {}
        self._timer: threading.Timer | None = None
        self._last = 0.0
        self._closed = False
        self.messages_sent = 0
        self.envelopes_sent = 0
        #: (wall time, envelopes) of recent sends: what the benchmarks count as kernel messages
        self.sent_log: deque[tuple[float, int]] = deque(maxlen=50_000)

    def push(self, cid: str, envelope: str | dict[str, Any]) -> None:
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

    def __init__(self, send: Callable[[dict[str, Any]], None], connect: Connect, *,
                 interval: float = 0.05, max_views: int = 8) -> None:
        self.batcher = FrameBatcher(send, interval)
        self._connect = connect
        self._lock = threading.Lock()
        self._conns: OrderedDict[str, HostConnection] = OrderedDict()
        self.max_views = max_views
        self.received = 0

    @property
    def views(self) -> list[str]:
        with self._lock:
            return list(self._conns)

    def handle(self, content: Any) -> None:
        """A custom message from the front end (any thread)."""
        if not isinstance(content, dict):
            return
        kind, cid = content.get("kind"), content.get("cid")
        if not isinstance(cid, str) or not cid:
            return
        if kind == "bye":
            self._drop(cid)
            return
        if kind != "envelope" or not isinstance(content.get("envelope"), dict):
            return
        self.received += 1
        envelope = content["envelope"]
        try:
            conn = self._conn(cid)
        except Exception as exc:  # no host: answer the envelope with a coded error, keep serving
            from ..errors import DshError

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


def refusal(envelope: dict[str, Any], code: str, message: str) -> list[dict[str, Any]]:
    """The coded error reply to an envelope that cannot be served."""
    error = {"code": code, "message": message}
    if envelope.get("type") == "client-request":
        return [{"type": "server-response", "rpcId": envelope.get("rpcId"), "result": {"ok": False, "error": error}}]
    if envelope.get("type") == "open":
        return [{"type": "error", "streamId": envelope.get("streamId"), "error": error}]
    return []


class SavedLogConnection:
    """Serves a saved log to the widget's front end without a Host (read-only replay).

    ``session/follow`` answers with the snapshot of the whole log (``live.attached`` false) and
    stays open; ``session/info`` describes the log; anything that would run the agent is refused
    with ``READ_ONLY``. A log that could not be read answers every envelope with its coded error.
    """

    def __init__(self, send: Callable[[str], None], *, session_id: str, header: dict[str, Any],
                 lines: list[str] | None, error: tuple[str, str] | None = None) -> None:
        self._send, self.session_id, self.header = send, session_id, header
        self._lines, self._error = lines or [], error
        self._streams: set[str] = set()
        self._lock = threading.Lock()

    def _out(self, message: dict[str, Any]) -> None:
        self._send(json.dumps(message, ensure_ascii=False, separators=(",", ":")))

    def receive(self, message: str | bytes | dict[str, Any]) -> None:
        env = json.loads(message) if isinstance(message, str | bytes) else message
        kind = env.get("type")
        if self._error is not None:
            for reply in refusal(env, *self._error):
                self._out(reply)
            return
        if kind == "client-request" and env.get("method") == "session/info":
            value = {"sessionId": self.session_id, "cwd": self.header.get("cwd", ""), "live": False,
                     "status": "idle", "lastSeq": len(self._lines) - 1}
            self._out({"type": "server-response", "rpcId": env.get("rpcId"), "result": {"ok": True, "value": value}})
        elif kind == "client-request":
            for reply in refusal(env, "READ_ONLY", "this widget replays a saved log; resume the session to run it"):
                self._out(reply)
        elif kind == "open" and env.get("endpoint") == "session/follow":
            self._follow(env)
        elif kind == "open":
            for reply in refusal(env, "UNKNOWN_METHOD", f"{env.get('endpoint')!r} is not served for a saved log"):
                self._out(reply)
        elif kind == "cancel":
            with self._lock:
                known = env.get("streamId") in self._streams
                self._streams.discard(env.get("streamId"))
            if known:
                self._out({"type": "end", "streamId": env.get("streamId")})

    def _follow(self, env: dict[str, Any]) -> None:
        stream_id = env.get("streamId")
        payload = env.get("payload") or {}
        args = payload.get("args", payload) if isinstance(payload, dict) else {}
        cursor = args.get("cursor")
        start = -1 if not isinstance(cursor, int) else cursor
        last = len(self._lines) - 1
        if start > last or start < -1:
            self._out({"type": "error", "streamId": stream_id, "error": {
                "code": "BAD_ARGS", "message": f"cursor {start} is outside the log (last seq {last})"}})
            return
        with self._lock:
            self._streams.add(str(stream_id))
        # the stored lines are already JSON: splice them instead of re-encoding 10k events
        events = ",".join(self._lines[start + 1:])
        header = json.dumps(self.header, separators=(",", ":"))
        snapshot = (f'{{"type":"snapshot","sessionId":{json.dumps(self.session_id)},"header":{header},'
                    f'"cursor":{last},"events":[{events}],"live":{{"attached":false,"status":"idle"}}}}')
        self._send(f'{{"type":"item","streamId":{json.dumps(stream_id)},"value":{snapshot}}}')

    def close(self) -> None:
        with self._lock:
            self._streams.clear()
