"""``python -m dsh_notebook ...`` as a real process, the one way the tests run the CLI to its end.

``dsh(*argv, env=..., cwd=..., input=..., timeout=...)`` returns what ``subprocess.run(...,
capture_output=True, text=True)`` returns. The process is forked from a warm interpreter of this
test worker (``tests/support/zygote.py``), which skips the ~0.4 CPU-seconds of imports a cold start
spends; where that cannot stand in for a cold start it starts ``python -m dsh_notebook`` itself:

- the environment asks for another interpreter set-up (``PYTHON*`` variables, the locale);
- ``DSH_TEST_COLD=1`` (every run cold, to check that the warm path hides nothing);
- no ``os.pidfd_open`` (not Linux).

Tests of the process itself (signals, a terminal, stdin kept open, no process left behind after a
kill) start their own ``subprocess.Popen`` on ``COMMAND``."""

from __future__ import annotations

import array
import atexit
import json
import locale
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COMMAND = (sys.executable, "-m", "dsh_notebook")
# what a warm interpreter fixed at its own start: a run whose environment differs in these starts cold
_START_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONWARNINGS", "PYTHONIOENCODING", "PYTHONUTF8",
               "PYTHONHASHSEED", "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTHONTRACEMALLOC", "PYTHONUNBUFFERED",
               "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONOPTIMIZE", "LANG", "LC_ALL", "LC_CTYPE")


def cli_env(**extra: str) -> dict[str, str]:
    """The test process's environment with this checkout importable, and ``extra`` on top."""
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


class _Zygote:
    """The warm interpreter of this process (one per test worker, started on first use)."""

    _lock = threading.Lock()
    _instance: _Zygote | None = None

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="dsh-zygote-")
        self.path = os.path.join(self.dir, "s")
        self.env = cli_env()
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.zygote", self.path], cwd=REPO,
                                     env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            raise RuntimeError(f"the warm interpreter did not start ({self.proc.wait()})")
        atexit.register(self.close)

    @classmethod
    def get(cls) -> _Zygote | None:
        if os.environ.get("DSH_TEST_COLD") == "1" or not hasattr(os, "pidfd_open"):
            return None
        with cls._lock:
            if cls._instance is None or cls._instance.proc.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def fits(self, env: Mapping[str, str]) -> bool:
        return all(_start_value(env, name) == _start_value(self.env, name) for name in _START_VARS)


def _start_value(env: Mapping[str, str], name: str) -> object:
    value = env.get(name)
    if name == "PYTHONPATH" and value is not None:  # "REPO" and "REPO:" put the same folders on sys.path
        return [part for part in value.split(os.pathsep) if part]
    return value


class _Unreachable(Exception):
    """The warm interpreter took no request (gone, or not listening): nothing was started."""


def _translate(data: bytes) -> str:
    """Bytes to text as ``subprocess.run(text=True)`` decodes them (locale encoding, universal newlines)."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


class _Run:
    """One warm run's pipes and control connection, read together until the process has ended."""

    def __init__(self, conn: socket.socket, stdin: int | None, data: bytes, out: int, err: int) -> None:
        self.conn, self.stdin, self.data, self.out, self.err = conn, stdin, data, out, err
        self.chunks: dict[int, list[bytes]] = {out: [], err: []}
        self.replies: dict[str, int | float] = {}
        self.pending = b""
        self.sel = selectors.DefaultSelector()
        for fd in (out, err, conn.fileno()):
            self.sel.register(fd, selectors.EVENT_READ)
        if stdin is not None:
            self.sel.register(stdin, selectors.EVENT_WRITE)

    def _done(self) -> bool:
        """Ended and both pipes at their end (as ``communicate`` waits for them); stdin may stay unread."""
        left = set(self.sel.get_map()) - {self.stdin}
        return "status" in self.replies and not left - {self.conn.fileno()}

    def wait(self, deadline: float | None) -> bool:
        """False when the deadline came first."""
        while not self._done():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            for key, _ in self.sel.select(left):
                self._ready(key.fd)
        return True

    def _ready(self, fd: int) -> None:
        if fd == self.stdin:
            try:
                sent = os.write(fd, self.data[:65536])
            except BrokenPipeError:
                sent = len(self.data)
            self.data = self.data[sent:]
            if not self.data:
                self._drop_stdin()
        elif fd == self.conn.fileno():
            try:
                got = self.conn.recv(4096)
            except ConnectionResetError:
                if "pid" not in self.replies:  # died before it started anything
                    raise _Unreachable("the warm interpreter ended before the run started") from None
                raise
            if not got:
                self.sel.unregister(fd)
                return
            *lines, self.pending = (self.pending + got).split(b"\n")
            for line in lines:
                self.replies.update(json.loads(line))
        else:
            piece = os.read(fd, 65536)
            if piece:
                self.chunks[fd].append(piece)
            else:
                self.sel.unregister(fd)

    def _drop_stdin(self) -> None:
        if self.stdin is not None:
            self.sel.unregister(self.stdin)
            os.close(self.stdin)
            self.stdin = None

    def output(self) -> tuple[str, str]:
        return _translate(b"".join(self.chunks[self.out])), _translate(b"".join(self.chunks[self.err]))

    def close(self) -> None:
        self._drop_stdin()
        self.sel.close()
        self.conn.close()
        os.close(self.out)
        os.close(self.err)


def _warm(zygote: _Zygote, argv: list[str], env: Mapping[str, str], cwd: str, input: str | None,
          timeout: float | None) -> subprocess.CompletedProcess[str]:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = (os.dup(0), None) if input is None else os.pipe()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(zygote.path)
        request = json.dumps({"argv": argv, "env": dict(env), "cwd": cwd}).encode()
        sent = conn.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [in_r, out_w, err_w]))])
        conn.sendall(request[sent:])
        conn.shutdown(socket.SHUT_WR)  # the request's end
    except OSError as exc:  # nothing was started
        conn.close()
        for fd in (out_r, err_r, *((in_w,) if in_w is not None else ())):
            os.close(fd)
        raise _Unreachable(str(exc)) from exc
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    run = _Run(conn, in_w, (input or "").encode(locale.getpreferredencoding(False)), out_r, err_r)
    try:
        if not run.wait(None if timeout is None else time.monotonic() + timeout):
            if "pid" in run.replies:  # as subprocess.run does: kill, collect what it wrote, raise
                os.kill(int(run.replies["pid"]), signal.SIGKILL)
            run.wait(time.monotonic() + 30)
            out, err = run.output()
            raise subprocess.TimeoutExpired([*COMMAND, *argv], timeout or 0, output=out, stderr=err)
        out, err = run.output()
        return subprocess.CompletedProcess([*COMMAND, *argv], int(run.replies["status"]), out, err)
    finally:
        run.close()


def dsh(*argv: str, env: Mapping[str, str] | None = None, cwd: str | os.PathLike[str] | None = None,
        input: str | None = None, timeout: float | None = 120,
        check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``python -m dsh_notebook *argv`` to its end: ``env`` defaults to ``cli_env()``."""
    env = cli_env() if env is None else env
    where = os.fspath(cwd) if cwd is not None else os.getcwd()
    zygote = _Zygote.get()
    if zygote is not None and zygote.fits(env):
        try:
            done = _warm(zygote, list(argv), env, where, input, timeout)
        except _Unreachable:  # the warm interpreter is gone, nothing ran: a new one, once
            zygote.proc.kill()
            zygote.proc.wait()
            zygote = _Zygote.get()
            assert zygote is not None
            done = _warm(zygote, list(argv), env, where, input, timeout)
    else:
        done = subprocess.run([*COMMAND, *argv], capture_output=True, text=True, env=dict(env), cwd=where,
                              input=input, timeout=timeout, check=False)
    if check:
        done.check_returncode()
    return done
