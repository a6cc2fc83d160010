"""``--model local:PATH.gguf`` / ``local:smollm2``: a real model offline (issue 20 item 8).

The first use starts llama.cpp's own OpenAI-compatible server (the prebuilt ``xllamacpp`` wheel,
extra ``[local]``) in its own process (:mod:`.local_worker`), on a Unix socket in a folder only
this user can enter, requiring a key made for that start (:mod:`.local_channel`: no address
another local user can take or reach, no key on any command line, every connection's peer
checked). It waits until ``GET /health`` answers, reads ``GET /props`` (the window, the chat
template), and is spoken to by :class:`~.local_adapter.LocalAdapter`. One server per GGUF file per
process, shared by the adapters that use it; it stops when the last of them is closed (the host
or kernel shuts down, without needing a thread: it works at interpreter exit), at exit, and by
itself when this process dies (its stdin pipe closes).

Which GGUF a name means, and what a missing wheel's error says: :mod:`.local_models`.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

from ..errors import ModelError
from ..providers import from_props, server_root
from .local_channel import BASE_URL, Channel
from .local_models import check_installed

START_TIMEOUT_S = 120.0
STOP_GRACE_S = 5.0


class LocalServer:
    """One llama.cpp server process for one GGUF file (started on first use, again after a crash)."""

    base_url = BASE_URL

    def __init__(self, path: Path, *, ctx: int, threads: int) -> None:
        self.path, self.ctx, self.threads = path, ctx, threads
        self.proc: subprocess.Popen[bytes] | None = None
        self.channel: Channel | None = None  # this start's socket, key and process id
        self.users = 0
        self.props: dict[str, Any] = {}
        self._ready = False

    @property
    def chat_template(self) -> str:
        return str(self.props.get("chat_template") or "")

    @property
    def window(self) -> int | None:
        """The context window the server reported (``None`` before it first answered)."""
        return from_props(self.props)

    @property
    def schema_tools(self) -> bool:
        """Tool calls through a JSON-schema grammar: the chat template knows no tool calls."""
        return "tool_calls" not in self.chat_template

    def spawn(self) -> None:
        if self.proc is not None:
            return
        check_installed()
        channel = self.channel = Channel()
        log = os.open(channel.log_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        cmd = [sys.executable, "-m", "dsh_notebook.models.local_worker", "--model", str(self.path),
               "--socket", str(channel.socket_path), "--ctx", str(self.ctx), "--threads", str(self.threads)]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, start_new_session=True)
        except BaseException:
            self._cleanup()
            raise
        finally:
            os.close(log)
        channel.pid = self.proc.pid
        assert self.proc.stdin is not None
        try:  # the key on the pipe, never in argv or the environment (/proc/PID/cmdline is world-readable)
            self.proc.stdin.write(channel.key.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # the worker died at once: ensure_started reports it with its log

    async def ensure_started(self) -> None:
        """Start the server if needed and wait until it answers (``LOCAL_SERVER_FAILED`` if not)."""
        if self._ready:
            return
        self.spawn()
        channel = self.channel
        assert channel is not None
        root = server_root(self.base_url)
        deadline = time.monotonic() + START_TIMEOUT_S
        async with httpx2.AsyncClient(timeout=2.0, transport=channel.transport(),
                                      headers={"authorization": f"Bearer {channel.key}"}) as client:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    raise self._failed("the server process ended")
                try:
                    health = await client.get(f"{root}/health")
                    if health.status_code == 200:
                        props = await client.get(f"{root}/props")
                        body = props.json() if props.status_code == 200 else None
                        if not isinstance(body, dict):
                            raise self._failed(f"GET /props answered {props.status_code}")
                        self.props = body
                        self._ready = True
                        return
                except (httpx2.HTTPError, ValueError):
                    if channel.refused is not None:
                        raise self._failed(channel.refused) from None
                await asyncio.sleep(0.1)
        raise self._failed(f"it did not answer within {START_TIMEOUT_S:g} s")

    def _failed(self, why: str, what: str = "did not start", *, retryable: bool = False) -> ModelError:
        tail = ""
        if self.channel is not None:
            try:
                tail = self.channel.log_path.read_text(errors="replace")[-600:]
            except OSError:
                pass
        self._kill()
        return ModelError(f"llama.cpp's server for {self.path.name} {what}: {why}. {tail}".strip(),
                          code="LOCAL_SERVER_FAILED", retryable=retryable)

    def ended(self) -> int | None:
        """The exit status of a server process that has ended since it was ready, else ``None``."""
        return self.proc.poll() if self._ready and self.proc is not None else None

    def crashed(self, status: int) -> ModelError:
        """``LOCAL_SERVER_FAILED`` for a server that ended under a request (retryable: the next
        attempt starts a new one)."""
        return self._failed(f"its process ended with status {status}", what="stopped during a request",
                            retryable=True)

    def refused(self) -> ModelError | None:
        """``LOCAL_SERVER_FAILED`` if a connection found another process on the socket (never retried)."""
        if self.channel is None or self.channel.refused is None:
            return None
        return self._failed(self.channel.refused, what="was not the one answering")

    # -- stopping -----------------------------------------------------------------------------
    def _detach(self, sig: str) -> subprocess.Popen[bytes] | None:
        proc, self.proc, self._ready = self.proc, None, False
        if proc is not None and proc.poll() is None:
            if proc.stdin is not None:
                try:
                    proc.stdin.close()
                except OSError:
                    pass
            proc.kill() if sig == "kill" else proc.terminate()
        return proc

    def _cleanup(self) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            channel.remove()

    def _kill(self) -> None:
        proc = self._detach("kill")
        if proc is not None:
            proc.wait()
        self._cleanup()

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after a grace period (blocks; see :meth:`astop`)."""
        proc = self._detach("term")
        if proc is not None:
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._cleanup()

    async def astop(self) -> None:
        """:meth:`stop` without blocking the loop and without a thread (at interpreter exit the
        executors are shut down before ``atexit`` handlers run)."""
        proc = self._detach("term")
        if proc is not None:
            deadline = time.monotonic() + STOP_GRACE_S
            while proc.poll() is None and time.monotonic() < deadline:  # noqa: ASYNC110 (a Popen has no awaitable exit)
                await asyncio.sleep(0.02)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._cleanup()


_servers: dict[tuple[Path, int, int], LocalServer] = {}
_lock = threading.Lock()


def acquire(path: Path, ctx: int, threads: int) -> LocalServer:
    with _lock:
        server = _servers.get((path, ctx, threads))
        if server is None:
            server = _servers[(path, ctx, threads)] = LocalServer(path, ctx=ctx, threads=threads)
        server.users += 1
        return server


def _last_user_gone(server: LocalServer) -> bool:
    with _lock:
        server.users -= 1
        if server.users > 0:
            return False
        if _servers.get((server.path, server.ctx, server.threads)) is server:
            del _servers[(server.path, server.ctx, server.threads)]
        return True


def release(server: LocalServer) -> None:
    if _last_user_gone(server):
        server.stop()


async def arelease(server: LocalServer) -> None:
    if _last_user_gone(server):
        await server.astop()


def live_servers() -> list[LocalServer]:
    """The servers this process holds now (what ``doctor`` and the tests look at)."""
    with _lock:
        return list(_servers.values())


@atexit.register
def stop_all() -> None:
    """Stop every local server this process started."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()
