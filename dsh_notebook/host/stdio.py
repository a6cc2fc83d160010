"""``python -m dsh_notebook serve --stdio``: the host protocol as JSON lines on stdin/stdout
(the command builds its host in :mod:`dsh_notebook.launcher`, and serves it here).

One message per line, exactly the envelopes of DESIGN §6 (see :mod:`.envelopes`), on the same
Host, Gateway and Controller the kernel uses. A malformed line gets a coded error response
(``BAD_ENVELOPE`` with ``rpcId: null`` when no id could be read) and the host keeps serving.
Blank lines are ignored. Input is read in bounded memory (:mod:`.lines`): a line over the 8 MB
limit is answered ``LINE_TOO_LONG`` under the ``rpcId`` its start names, skipped to its end, and
the host goes on with the next line.

stdout carries the protocol only: the real fd 1 is kept for it and fd 1 is then pointed at
stderr, so a stray ``print`` or a child process cannot corrupt the stream. Logs go to stderr.
At end of input the connection closes — which, like closing any stream, does not cancel runs:
the host waits for running turns to end (their frames are still written), then shuts down.
SIGINT / SIGTERM shut down at once: running turns end ``aborted``, logs are flushed.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from .connection import ConnectionHandler
from .host import Host
from .lines import Oversized, oversized_error, read_lines

_STOP = object()


class LineWriter:
    """Writes queued lines to a binary stream on its own thread (the host loop never blocks)."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="dsh-stdio-writer", daemon=True)
        self.thread.start()

    def put(self, text: str) -> None:
        self.queue.put(text)

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is _STOP:
                return
            try:
                self.out.write(item.encode("utf-8") + b"\n")
                if self.queue.empty():
                    self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                return

    def close(self, timeout: float = 10.0) -> None:
        self.queue.put(_STOP)
        self.thread.join(timeout)
        try:
            self.out.flush()
        except OSError:
            pass


def _protocol_stdout() -> IO[bytes]:
    """A private handle on fd 1 for the protocol; fd 1 itself then goes to stderr."""
    sys.stdout.flush()
    proto = os.fdopen(os.dup(1), "wb", buffering=1 << 16)
    os.dup2(2, 1)
    return proto


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


async def _quiesce(host: Host, conn: ConnectionHandler) -> None:
    """End of input: let in-flight calls answer and running turns end (no approvals possible)."""
    while True:
        await conn.drain()
        await host.registry.wait_all_idle(answerable=False)
        if not conn.busy:
            return


def serve(make_host: Callable[[], Host]) -> int:
    """Serve stdin/stdout on the host ``make_host`` builds (once fd 1 is the protocol's alone);
    the exit code (130 after SIGINT / SIGTERM)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    writer = LineWriter(_protocol_stdout())
    host = make_host()
    conn = host.connect(writer.put, caller="stdio")
    previous = signal.signal(signal.SIGTERM, _interrupt)
    code = 0
    try:
        for line in read_lines(sys.stdin.buffer.fileno()):
            if isinstance(line, Oversized):
                conn.refuse(oversized_error(line))
            elif line.strip():
                conn.receive(line)
        host.run(_quiesce(host, conn))
    except KeyboardInterrupt:
        code = 130
    finally:
        signal.signal(signal.SIGTERM, previous)
        host.shutdown()
        conn.close()
        writer.close()
    return code
