"""The process that runs llama.cpp's own HTTP server (``xllamacpp``) for ``local:`` models.

``python -m dsh_notebook.models.local_worker --model PATH --port N [--ctx N] [--threads N]``

xllamacpp serves from native threads inside this process; they inherit the signal mask, so
SIGINT/SIGTERM are blocked before the server starts and waited for here instead. The worker ends
— and the server with it — on SIGTERM/SIGINT, when its stdin reaches end of file (the parent
closed the pipe or died), or, on Linux, when the parent dies (``PR_SET_PDEATHSIG``). It never
imports the rest of the package (quick start, nothing of the host's state).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

_STOP = {signal.SIGINT, signal.SIGTERM}


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _watch_stdin() -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dsh_notebook.models.local_worker", allow_abbrev=False)
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    _die_with_parent()
    if os.getppid() == 1:  # the parent is gone already
        return 0
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)  # before any native thread exists
    import xllamacpp  # type: ignore[import-not-found]

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.port = args.port
    params.hostnames = ["127.0.0.1"]
    params.use_jinja = True
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    server = xllamacpp.Server(params)
    threading.Thread(target=_watch_stdin, daemon=True).start()
    signal.sigwait(_STOP)
    del server
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
