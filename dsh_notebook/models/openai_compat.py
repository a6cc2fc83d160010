"""The OpenAI-compatible adapter: DeepSeek, OpenAI, and any ``base_url`` (vLLM, Ollama, llama.cpp).

One request per attempt through ``openai.AsyncOpenAI(max_retries=0)`` — retries are the Step's
business — with ``stream=True`` and ``stream_options={"include_usage": True}``. The SDK's stream
helper is not used: :class:`~dsh_notebook.models.accumulator.ChunkAccumulator` assembles the deltas.

``reasoning_content`` rule (DeepSeek thinking mode, api-docs.deepseek.com "Thinking Mode"): the
reasoning of an assistant message that made tool calls must be passed back in every later
request (else HTTP 400 "The reasoning_content in the thinking mode must be passed back"); the
reasoning of a message without tool calls is not needed (ignored by the current API, refused with
400 by the legacy ``deepseek-reasoner``). So with ``send_reasoning=True`` (routing turns it on for
DeepSeek) tool-call messages carry ``reasoning_content`` (``""`` when none was recorded, e.g. a
message from another model) and other assistant messages carry none. Every other provider gets no
``reasoning_content`` at all (strict servers refuse unknown message fields).

The SDK stops at ``data: [DONE]`` without saying so; ``_Client`` gives each stream a decoder that
notes it, so a stream that ends with neither a finish reason nor ``[DONE]`` is an incomplete attempt
(``STREAM_INCOMPLETE``, retried like a cut connection), never a completed answer.

SDK errors become :class:`~dsh_notebook.errors.ModelError` (see :func:`map_status_error`); the
SDK exception is never chained (its text may quote the key) and every message is redacted.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai
from openai._streaming import ServerSentEvent, SSEDecoder  # only to see [DONE] (see _Client)
from pydantic import JsonValue

from ..config import (
    DEFAULT_TIMEOUT_S,
    redact_url,
    register_url_secrets,
)
from ..errors import ModelError, register_secret
from ..providers import by_prefix, own_hosts
from ..wire.events import ToolSchema
from ..wire.messages import AnyMessage
from .accumulator import ChunkAccumulator
from .base import ModelAdapter, ModelRequest, StreamChunk, mark_first_byte
from .chat_format import ChatMessage, to_openai_messages
from .openai_errors import is_overflow, map_status_error, retry_after_ms
from .server_window import cached_window, probe_window
from .server_window import server_window as probe_server_window

# OpenAI models that take ``max_completion_tokens`` and refuse ``max_tokens`` (o1, o3-mini, o4-mini, gpt-5…)
_COMPLETION_TOKENS = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)

# Request options passed as SDK arguments; any other config key goes to ``extra_body``.
_SDK_OPTIONS = frozenset({
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "seed",
    "presence_penalty", "frequency_penalty", "reasoning_effort", "tool_choice",
    "parallel_tool_calls", "response_format", "user", "logit_bias",
})
CONNECT_TIMEOUT_S = 10.0


class _DoneWatchingDecoder(SSEDecoder):
    """The SDK's own SSE decoder, noting whether the server sent its ``data: [DONE]`` marker
    (the SDK stops at it silently, so a stream cut at an event boundary looks just the same)."""

    saw_done = False

    def decode(self, line: str) -> ServerSentEvent | None:
        sse = super().decode(line)
        if sse is not None and sse.data.startswith("[DONE]"):
            self.saw_done = True
        return sse


class _Client(openai.AsyncOpenAI):
    def _make_sse_decoder(self) -> SSEDecoder:
        return _DoneWatchingDecoder()


def saw_done(stream: object) -> bool:
    """Whether ``stream`` (an SDK ``AsyncStream``) read ``[DONE]``; ``True`` if it cannot tell."""
    decoder = getattr(stream, "_decoder", None)
    return decoder.saw_done if isinstance(decoder, _DoneWatchingDecoder) else True


class OpenAICompatAdapter(ModelAdapter):
    """``ModelAdapter`` for OpenAI Chat Completions-compatible servers."""

    def __init__(
        self,
        provider: str,
        base_url: str | None,
        api_key: str,
        *,
        http_client: httpx2.AsyncClient | None = None,
        send_reasoning: bool = False,
        timeout: float | None = None,
        key_env: str | None = None,
        model: str | None = None,
        first_byte_timeout: float | None = None,
        idle_timeout: float | None = None,
        probe_window: bool | None = None,
    ) -> None:
        register_secret(api_key)
        register_url_secrets(base_url)
        self.provider = provider
        self.base_url = redact_url(base_url)  # what is logged (request/header) and quoted in errors
        self.send_reasoning = send_reasoning
        row = by_prefix(provider)
        self.key_env = key_env or (row.key_env if row is not None and row.key_env else "DSH_API_KEY")
        self.model = model  # the served model's name (for the server's window)
        self.idle_timeout = idle_timeout or timeout or DEFAULT_TIMEOUT_S
        self.first_byte_timeout = first_byte_timeout or timeout or DEFAULT_TIMEOUT_S
        self.probe_window = (_host(base_url) not in own_hosts()) if probe_window is None else probe_window
        self._probe_url = base_url
        self._probe_key = api_key if api_key and api_key != "not-needed" else None
        # no read timeout in the HTTP client: the first-byte and idle timers of ``stream`` decide
        # (a response still arriving is never cut); connecting gives up sooner
        connect = min(self.idle_timeout, CONNECT_TIMEOUT_S)
        limits = httpx2.Timeout(None, connect=connect, write=self.idle_timeout, pool=self.idle_timeout)
        self._client = _Client(
            base_url=base_url, api_key=api_key, max_retries=0, http_client=http_client, timeout=limits
        )
        self._tools_key: tuple[ToolSchema, ...] | None = None
        self._tools: list[dict[str, JsonValue]] = []

    async def aclose(self) -> None:
        await self._client.close()

    async def server_window(self) -> int | None:
        """The context window the server reports for this model (asked once, cached; ``None``
        when it does not say, or for the providers' own endpoints)."""
        if not self.probe_window:
            return None
        key = self._probe_key

        async def probe(url: str, model: str) -> int | None:
            return await probe_window(url, model, api_key=key)

        return await probe_server_window(self._probe_url, self.model, probe)

    def known_window(self) -> int | None:
        """The server's window if it was asked before (never asks)."""
        return cached_window(self._probe_url, self.model) if self.probe_window else None

    # --- request mapping ------------------------------------------------------------------------

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for one frozen request."""
        params: dict[str, Any] = {
            "model": request.model,
            "messages": self.openai_messages(request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = self.openai_tools(request.tools)
        given = request.config.get("extra_body")  # a JSON object (check_option refuses anything else)
        extra: dict[str, JsonValue] = dict(given) if isinstance(given, dict) else {}
        for key, value in request.config.items():
            if key in _SDK_OPTIONS:
                params[key] = value
            elif key != "extra_body" and value is not None:
                extra[key] = value
        if extra:
            params["extra_body"] = extra
        if self.provider == "openai" and "max_tokens" in params and _COMPLETION_TOKENS.match(request.model):
            # OpenAI's reasoning models (o-series, gpt-5) refuse max_tokens: the same limit by its new name
            params.setdefault("max_completion_tokens", params.pop("max_tokens"))
        return params

    def openai_messages(self, messages: Sequence[AnyMessage]) -> list[ChatMessage]:
        out = to_openai_messages(messages, include_reasoning=self.send_reasoning)
        if not self.send_reasoning:
            return out
        fixed = []
        for msg in out:  # shared with the cache: changed copies only
            if msg["role"] == "assistant":
                if msg.get("tool_calls"):
                    if "reasoning_content" not in msg:
                        msg = {**msg, "reasoning_content": ""}
                elif "reasoning_content" in msg:
                    msg = msg.copy()
                    del msg["reasoning_content"]
            fixed.append(msg)
        return fixed

    def openai_tools(self, tools: tuple[ToolSchema, ...]) -> list[dict[str, JsonValue]]:
        if tools is not self._tools_key:
            self._tools = [
                {"type": "function",
                 "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in tools
            ]
            self._tools_key = tools
        return self._tools

    # --- streaming --------------------------------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        params = self.build_params(request)
        acc = ChunkAccumulator()
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.first_byte_timeout):
                response = await self._client.chat.completions.create(**params)
        except TimeoutError:
            raise self.timeout_error("first-byte", self.first_byte_timeout, acc) from None
        except openai.APIStatusError as exc:
            raise map_status_error(exc, model=request.model, base_url=self.base_url,
                                   key_env=self.key_env) from None
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc) from None
        mark_first_byte()  # the response head has arrived
        chunks = response.__aiter__()
        try:
            while True:
                if acc.chunks_seen:
                    which, limit, left = "idle", self.idle_timeout, self.idle_timeout
                else:  # the response head may come at once; the first chunk after the prompt's processing
                    which, limit = "first-byte", self.first_byte_timeout
                    left = max(0.0, limit - (time.monotonic() - started))
                try:
                    async with asyncio.timeout(left):
                        raw = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise self.timeout_error(which, limit, acc) from None
                for chunk in acc.feed(raw):
                    yield chunk
        except openai.APIConnectionError as exc:
            raise acc.cut_error(
                f"the connection to {self.base_url} was lost mid-stream after "
                f"{acc.chunks_seen} chunks ({_cause(exc)})"
            ) from None
        except openai.APIError as exc:  # an {"error": ...} event inside the stream
            overflow = is_overflow(None, str(getattr(exc, "type", "") or ""), exc.message)
            cut = acc.cut_error(f"the provider sent an error mid-stream: {exc.message}",
                                code="CONTEXT_OVERFLOW" if overflow else "SERVER_ERROR")
            if overflow:
                cut.retryable = False  # compacted and retried once by the agent, never the generic retry
            raise cut from None
        except ValueError as exc:  # malformed JSON in a data: line
            raise acc.cut_error(f"the provider sent malformed stream data: {exc}",
                                code="SERVER_ERROR") from None
        finally:
            await response.close()
        for chunk in acc.finish(done=saw_done(response)):
            yield chunk

    def timeout_error(self, which: str, seconds: float, acc: ChunkAccumulator) -> ModelError:
        """``MODEL_TIMEOUT``: the server was slow. Retryable only when nothing was received."""
        flag = "--first-byte-timeout" if which == "first-byte" else "--idle-timeout"
        if acc.chunks_seen == 0:
            return ModelError(
                f"the model server at {self.base_url} sent nothing for {seconds:g} s ({which} timeout; "
                f"raise it with {flag})", code="MODEL_TIMEOUT", retryable=True)
        cut = acc.cut_error(
            f"the model server at {self.base_url} sent nothing for {seconds:g} s after {acc.chunks_seen} "
            f"chunks ({which} timeout; raise it with {flag})", code="MODEL_TIMEOUT")
        cut.retryable = False  # something arrived: never thrown away and asked again
        return cut

    def _connection_error(self, exc: openai.APIConnectionError) -> ModelError:
        what = "timed out" if isinstance(exc, openai.APITimeoutError) else "failed"
        return ModelError(f"the connection to {self.base_url} {what} ({_cause(exc)})",
                          code="CONNECTION", retryable=True)


def _host(url: str | None) -> str:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url).hostname or "").lower() if url else ""
    except ValueError:
        return ""


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return str(exc)
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__

__all__ = ["OpenAICompatAdapter", "is_overflow", "map_status_error", "retry_after_ms", "saw_done"]
