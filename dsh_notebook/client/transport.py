"""Transports: how JSON lines travel between a :class:`Connection` and a host.

- :class:`InProcessTransport` — the host runs in this process (kernel, CLI). Messages still go
  as JSON text, so what the magic sends is byte-for-byte what ``serve --stdio`` would receive.
  Messages from the host are queued and delivered on one delivery thread, in order, so a slow
  client callback never blocks the host loop.
- :class:`StdioTransport` — spawns ``python -m dsh_notebook serve --stdio`` and speaks to it over
  pipes (one message per line). Used by tests and by outside scripts.

The widget's comm transport (Python side in ``notebook/``, JS side in ``js/``) follows the same
three-method shape: ``start(on_message)``, ``send(text)``, ``close()``.
"""

from __future__ import annotations

import logging
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..host.connection import ConnectionHandler
    from ..host.host import Host

log = logging.getLogger(__name__)
_STOP = object()


class _Delivery:
    """A queue and one thread calling ``on_message`` for each queued line, in order."""

    def __init__(self, name: str) -> None:
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.name = name
        self.thread: threading.Thread | None = None

    def start(self, on_message: Callable[[str], None]) -> None:
        def run() -> None:
            while True:
                item = self.queue.get()
                if item is _STOP:
                    return
                try:
                    on_message(item)
                except Exception:
                    log.exception("delivery of a host message failed")

        self.thread = threading.Thread(target=run, name=self.name, daemon=True)
        self.thread.start()

    def put(self, text: str) -> None:
        self.queue.put(text)

    def stop(self) -> None:
        self.queue.put(_STOP)


class InProcessTransport:
    """A transport to a :class:`~dsh_notebook.host.host.Host` in this process."""

    def __init__(self, host: Host, *, caller: str = "in-process") -> None:
        self.host, self.caller = host, caller
        self._delivery = _Delivery(f"dsh-client-{caller}")
        self.handler: ConnectionHandler | None = None

    def start(self, on_message: Callable[[str], None]) -> None:
        self._delivery.start(on_message)
        self.handler = self.host.connect(self._delivery.put, caller=self.caller)

    def send(self, text: str) -> None:
        if self.handler is None:
            raise RuntimeError("transport not started")
        self.handler.receive(text)

    def close(self) -> None:
        if self.handler is not None:
            self.handler.close()
        self._delivery.stop()


class StdioTransport:
    """A transport to ``python -m dsh_notebook serve --stdio`` in a child process."""

    def __init__(
        self,
        argv: Sequence[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = list(argv or [sys.executable, "-m", "dsh_notebook", "serve", "--stdio"])
        self.env, self.cwd = env, cwd
        self.process: subprocess.Popen[bytes] | None = None
        self._write_lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self.stderr_lines: list[str] = []

    def start(self, on_message: Callable[[str], None]) -> None:
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(self.env or {})},
            cwd=self.cwd,
        )
        out, err = self.process.stdout, self.process.stderr
        assert out is not None and err is not None

        def read() -> None:
            for raw in out:
                try:
                    on_message(raw.decode("utf-8").rstrip("\n"))
                except Exception:
                    log.exception("stdio delivery failed")

        def drain(stream: IO[bytes]) -> None:
            for raw in stream:
                self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

        self._reader = threading.Thread(target=read, name="dsh-stdio-reader", daemon=True)
        self._reader.start()
        threading.Thread(target=drain, args=(err,), name="dsh-stdio-stderr", daemon=True).start()

    def send(self, text: str) -> None:
        self.send_raw(text.encode("utf-8") + b"\n")

    def send_raw(self, data: bytes) -> None:
        """Write raw bytes (tests use it to send malformed lines)."""
        assert self.process is not None and self.process.stdin is not None
        with self._write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def close(self, timeout: float = 20.0) -> int | None:
        if self.process is None:
            return None
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._reader is not None:
            self._reader.join(timeout)
        return self.process.returncode
