"""The process that runs llama.cpp's own HTTP server (``xllamacpp``) for ``local:`` models.

``python -m dsh_notebook.models.local_worker --model PATH --socket PATH [--ctx N] [--threads N]``

The server listens on the Unix socket ``--socket`` only (in a folder private to this user, made by
the parent: :mod:`.local_channel`) and requires the key the parent writes as the first line of this
process's stdin — never on its command line or in its environment, which other users can read.

xllamacpp serves from native threads inside this process; they inherit the signal mask, so
SIGINT/SIGTERM are blocked before the server starts and waited for here instead. The worker ends
— and the server with it — on SIGTERM/SIGINT, when its stdin reaches end of file (the parent
closed the pipe or died), or, on Linux, when the parent dies (``PR_SET_PDEATHSIG``: SIGTERM). Each
way it removes its socket, its log and their folder first, so a parent that was killed leaves
nothing behind either. It never imports the rest of the package (quick start, nothing of the
host's state).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import NoReturn

_STOP = {signal.SIGINT, signal.SIGTERM}


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: waited for below, like any stop
    except (OSError, AttributeError):
        pass


def _remove(socket_path: str) -> None:
    """The socket, the log beside it and their folder (only if nothing else is in it)."""
    folder = os.path.dirname(os.path.abspath(socket_path))
    for path in (socket_path, os.path.join(folder, "server.log")):
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _end(socket_path: str) -> NoReturn:
    _remove(socket_path)
    os._exit(0)


def _watch_stdin(socket_path: str) -> None:
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    _end(socket_path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dsh_notebook.models.local_worker", allow_abbrev=False)
    parser.add_argument("--model", required=True)
    parser.add_argument("--socket", required=True, help="the Unix socket to serve on (its folder: 0700)")
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    _die_with_parent()
    if os.getppid() == 1:  # the parent is gone already
        return 0
    if not args.socket.endswith(".sock"):  # llama.cpp serves a Unix socket only for a host ending in .sock
        print("local_worker: --socket must end in .sock", file=sys.stderr)
        return 2
    if os.stat(os.path.dirname(os.path.abspath(args.socket))).st_mode & 0o077:
        print("local_worker: the socket's folder is not private (0700)", file=sys.stderr)
        return 2
    key = sys.stdin.buffer.readline().strip().decode("ascii", "replace")
    if not key:
        print("local_worker: no key on stdin", file=sys.stderr)
        return 2
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)  # before any native thread exists
    import xllamacpp  # type: ignore[import-not-found]

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.hostnames = [args.socket]  # a host ending in .sock: a Unix socket, no TCP port at all
    params.api_keys = [key]
    params.use_jinja = True
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    server = xllamacpp.Server(params)
    threading.Thread(target=_watch_stdin, args=(args.socket,), daemon=True).start()
    signal.sigwait(_STOP)
    del server
    _end(args.socket)


if __name__ == "__main__":
    sys.exit(main())
