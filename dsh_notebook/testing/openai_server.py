"""A loopback OpenAI-compatible server for tests: real sockets, HTTP/1.1, SSE.

``FakeOpenAIServer`` runs an asyncio server on its own thread (so sync and async tests both use
it), serves ``POST /v1/chat/completions`` and ``POST /chat/completions``, and answers each valid
request with the next scripted :class:`Reply` — a list of chunk dicts streamed as SSE, or a fault
(an HTTP error status, a stream cut mid-way, a stall, an empty stream, bytes split across TCP
writes). Requests are validated as strictly as real providers (auth, model, tools, message
pairing — see :mod:`dsh_notebook.testing.openai_checks`); invalid ones get an OpenAI-style 400 and
do not consume a reply — so do requests whose ``messages`` JSON is longer than
``max_request_chars`` (400 ``context_length_exceeded``, OpenAI's wording). The context-window
probes of the provider table (``GET /props`` …) are answered from ``windows`` (else 404) and
recorded in ``server.probes``; every other request is recorded in ``server.requests``::

    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("hello"), tool_call_reply([("c1", "read", '{"file_path":"a"}')]))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=server.api_key)
"""

from __future__ import annotations

import asyncio
import collections
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from ..providers import window_probes
from .openai_checks import check_request
from .openai_chunks import (
    Reply,
    chunk,
    error_reply,
    multibyte_split_points,
    reasoning_chunks,
    split_text,
    text_chunks,
    text_reply,
    tool_call_chunks,
    tool_call_reply,
)

__all__ = [
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "chunk",
    "error_reply",
    "multibyte_split_points",
    "reasoning_chunks",
    "serve_fake_openai",
    "split_text",
    "text_chunks",
    "text_reply",
    "tool_call_chunks",
    "tool_call_reply",
]

DEFAULT_KEY = "sk-fake-test-0123456789abcdef"
PATHS = ("/v1/chat/completions", "/chat/completions")
# what dsh asks a server for its context window (the provider table's probes, models/server_window.py):
# answered from ``windows`` (else 404), recorded apart from the model requests
PROBES = frozenset(route for probe in window_probes() for route in probe.routes())
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable"}


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0
    error: str | None = None  # the 4xx message the server answered with, if any

    @property
    def messages(self) -> list[dict[str, JsonValue]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []


@dataclass
class FakeOpenAIServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (a random port)."""

    api_key: str | None = DEFAULT_KEY  # None: no auth check (like a local vLLM)
    models: tuple[str, ...] = ("fake-model",)
    deepseek_thinking: bool = False  # require reasoning_content on tool-call turns (DeepSeek)
    validate: bool = True
    max_request_chars: int | None = None  # longer ``messages`` (as JSON): 400 context_length_exceeded
    requests: list[RecordedRequest] = field(default_factory=list)
    probes: list[RecordedRequest] = field(default_factory=list)  # context-window probes (answered from ``windows``)
    windows: dict[tuple[str, str], Any] = field(default_factory=dict)  # (method, path) of a probe → its JSON answer
    port: int = 0
    uds: str | None = None  # serve on this Unix socket instead of a loopback port (a local: server's)

    def __post_init__(self) -> None:
        self._replies: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # --- scripting ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def _next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    # --- lifecycle --------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            if self.uds is not None:
                self._server = loop.run_until_complete(asyncio.start_unix_server(self._handle, self.uds))
            else:
                self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.port))
                self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- HTTP ---------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._respond(method, target.split("?")[0], headers, body, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:  # server shutdown: end this connection quietly
            return
        finally:
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()

    async def _respond(self, method: str, path: str, headers: dict[str, str], raw: bytes,
                       writer: asyncio.StreamWriter) -> bool:
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        rec = RecordedRequest(method, path, headers, body)
        with self._lock:  # a window probe (GET /props …) is not a model request: kept apart
            (self.probes if (method, path) in PROBES else self.requests).append(rec)
            answer = self.windows.get((method, path)) if (method, path) in PROBES else None
        if answer is not None:
            rec.status = 200
            return await self._send_body(writer, 200, json.dumps(answer).encode())
        reply = self._check(rec)
        if reply is None:
            reply = self._next_reply() or error_reply(500, "fake server: no scripted reply left")
        rec.status = reply.status
        while reply.hold is not None and not await asyncio.to_thread(reply.hold.wait, 0.2):
            pass  # the first byte, held for the test (a stop cancels this wait; its thread ends within 0.2 s)
        if reply.hang_up:
            return False
        if reply.status != 200:
            return await self._send_json(writer, reply)
        return await self._send_stream(writer, reply, body.get("model", ""))

    def _check(self, rec: RecordedRequest) -> Reply | None:
        """An error reply for a request a real provider would refuse, else ``None``."""
        if rec.method != "POST" or rec.path not in PATHS:
            return error_reply(404, f"Invalid URL ({rec.method} {rec.path})")
        auth = rec.headers.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            given = auth.removeprefix("Bearer ")
            reply = error_reply(401, f"Incorrect API key provided: {given}.", code="invalid_api_key")
        elif not isinstance(rec.body, dict):
            reply = error_reply(400, "We could not parse the JSON body of your request.")
        elif rec.body.get("model") not in self.models:
            model = rec.body.get("model")
            reply = error_reply(404, f"The model `{model}` does not exist or you do not have access to it.",
                                code="model_not_found")
        else:
            problem = check_request(rec.body, deepseek_thinking=self.deepseek_thinking) if self.validate else None
            size = len(json.dumps(rec.body.get("messages"), ensure_ascii=False))
            if problem is None and self.max_request_chars is not None and size > self.max_request_chars:
                reply = error_reply(400, f"This model's maximum context length is {self.max_request_chars} "
                                    f"characters. However, your messages resulted in {size} characters. "
                                    "Please reduce the length of the messages.", code="context_length_exceeded")
            elif problem is None:
                return None
            else:
                reply = error_reply(400, problem)
        message = reply.error.get("message") if reply.error else None
        rec.error = message if isinstance(message, str) else None
        return reply

    async def _send_json(self, writer: asyncio.StreamWriter, reply: Reply) -> bool:
        payload = json.dumps({"error": reply.error}).encode() if reply.error else b""
        return await self._send_body(writer, reply.status, payload, reply.headers)

    async def _send_body(self, writer: asyncio.StreamWriter, status: int, payload: bytes,
                         headers: dict[str, str] | None = None) -> bool:
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
                "content-type: application/json", f"content-length: {len(payload)}",
                "x-request-id: req_fake", *(f"{k}: {v}" for k, v in (headers or {}).items())]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        await writer.drain()
        return True

    async def _send_stream(self, writer: asyncio.StreamWriter, reply: Reply, model: str) -> bool:
        head = ["HTTP/1.1 200 OK", "content-type: text/event-stream; charset=utf-8",
                "transfer-encoding: chunked", "cache-control: no-cache", "x-request-id: req_fake",
                *(f"{k}: {v}" for k, v in reply.headers.items())]
        if reply.head_delay:
            await asyncio.sleep(reply.head_delay)
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        if reply.first_delay:
            await asyncio.sleep(reply.first_delay)
        for n, piece in enumerate(reply.pieces(model)):
            if reply.cut_after is not None and n >= reply.cut_after:
                return False  # close without the terminating chunk: a cut stream
            if reply.stall_after is not None and n >= reply.stall_after:
                await asyncio.sleep(reply.stall_seconds)
                return False
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            if reply.gap:
                await asyncio.sleep(reply.gap)
        if reply.cut_after is not None or reply.stall_after is not None:
            await asyncio.sleep(reply.stall_seconds if reply.stall_after is not None else 0)
            return False
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True


@contextmanager
def serve_fake_openai(**options: Any) -> Iterator[FakeOpenAIServer]:
    """``with serve_fake_openai() as server:`` — for building fixtures in any test directory."""
    server = FakeOpenAIServer(**options)
    with server:
        yield server
