"""A warm interpreter that forks one real process per ``python -m dsh_notebook ...`` of a test.

A CLI process spends most of its start importing (the wire's pydantic models, the agent, the
tools, ``openai``): about 0.4 of its 0.5 CPU-seconds. The suite starts a few hundred of them. This
server imports all of that once per test worker, then answers each request with ``os.fork()``:
the child takes the request's stdin, stdout and stderr (passed as file descriptors), its working
directory, environment and argv, and runs ``dsh_notebook``'s ``__main__`` exactly as ``python -m``
does, to a normal interpreter exit (atexit handlers, flushed streams, its own exit status). What a
test observes — output, exit status, files, child processes, signals — is that of a real process
of the CLI; only the import is shared. ``tests/support/cli.py`` is the client.

Protocol on a UNIX socket, one connection per run: the client sends one JSON line (``argv``,
``env``, ``cwd``) with three file descriptors (SCM_RIGHTS); the server answers ``{"pid": N}`` when
the child runs and ``{"status": S}`` (``os.waitstatus_to_exitcode``) when it has ended. The server
ends when its stdin (a pipe from the test worker) closes.

Run as ``python -m tests.support.zygote SOCKET_PATH``."""

from __future__ import annotations

import array
import gc
import importlib
import json
import os
import pkgutil
import selectors
import socket
import sys
from typing import Any

# modules a CLI process never imports (IPython's side, the test helpers) or runs as scripts
_SKIP = ("dsh_notebook.notebook", "dsh_notebook.kernel", "dsh_notebook.testing", "dsh_notebook.demo.launch",
         "dsh_notebook.__main__", "dsh_notebook.tools.reaper", "dsh_notebook.tools.watchdog")


def warm() -> None:
    """Import what CLI commands import: every module of the package but the notebook's side, and ``openai``."""
    import dsh_notebook

    for info in pkgutil.walk_packages(dsh_notebook.__path__, "dsh_notebook."):
        if not info.name.startswith(_SKIP):
            importlib.import_module(info.name)
    importlib.import_module("openai")


def _recv(conn: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """One request: its file descriptors come with the first bytes, its JSON runs to the client's
    end of writing (``shutdown(SHUT_WR)``), however many reads that takes."""
    fds = array.array("i")
    data, ancdata, _flags, _addr = conn.recvmsg(1 << 16, socket.CMSG_LEN(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    parts = [data]
    while data:
        data = conn.recv(1 << 16)
        parts.append(data)
    try:
        request = json.loads(b"".join(parts))
    except ValueError:
        request = None
    if request is None or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    return request, list(fds)


def serve(path: str) -> dict[str, Any] | None:
    """Answer requests until stdin closes (returns None); in a forked child, return its request."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, ("accept", None))
    sel.register(0, selectors.EVENT_READ, ("parent", None))
    conns: list[socket.socket] = []
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, its connection)
    print("ready", flush=True)
    while True:
        for key, _ in sel.select():
            what, obj = key.data
            if what == "parent":
                if not os.read(0, 4096):
                    return None
            elif what == "accept":
                conn, _ = listener.accept()
                conns.append(conn)
                sel.register(conn, selectors.EVENT_READ, ("request", conn))
            elif what == "request":
                sel.unregister(obj)
                try:
                    got = _recv(obj)
                except OSError:
                    got = None
                if got is None:  # a broken request ends its connection, not the server
                    conns.remove(obj)
                    obj.close()
                    continue
                request, fds = got
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    listener.close()
                    for other in conns:
                        other.close()
                    for pidfd in running:
                        os.close(pidfd)
                    for target, fd in enumerate(fds):
                        os.dup2(fd, target)
                        os.close(fd)
                    return request
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, obj)
                sel.register(pidfd, selectors.EVENT_READ, ("exit", pidfd))
                try:
                    obj.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                except OSError:
                    pass  # the client is gone; the child is still waited for
            elif what == "exit":
                pid, conn = running.pop(obj)
                sel.unregister(obj)
                os.close(obj)
                _, status, usage = os.wait4(pid, 0)
                reply = {"status": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime}
                try:
                    conn.sendall(json.dumps(reply).encode() + b"\n")
                except OSError:
                    pass  # the test gave up on it (a timeout): nobody to tell
                conns.remove(conn)
                conn.close()


def run_child(request: dict[str, Any]) -> None:
    """Become ``python -m dsh_notebook *argv`` in the request's directory and environment."""
    import runpy

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = os.getcwd()  # as ``python -m`` sets it
    sys.argv = ["-m", *request["argv"]]  # runpy puts the module's file in argv[0]
    runpy.run_module("dsh_notebook", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    warm()
    # What was imported is moved out of the collector's sight: a child's collections (and its exit)
    # then do not walk, and so copy, the whole inherited heap — 0.35 → 0.10 CPU-s a scripted run.
    gc.collect()
    gc.freeze()
    job = serve(sys.argv[1])
    if job is not None:
        run_child(job)  # raises SystemExit from __main__, or lets an exception end the process as python -m would
