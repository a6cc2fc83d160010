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

import email.utils
import re
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai
from openai._streaming import ServerSentEvent, SSEDecoder  # only to see [DONE] (see _Client)

from ..config import PROVIDER_KEY_ENV, redact_url, register_url_secrets
from ..errors import ModelError, register_secret
from ..wire.events import ToolSchema
from ..wire.messages import AnyMessage
from .accumulator import ChunkAccumulator
from .base import ModelAdapter, ModelRequest, StreamChunk, mark_first_byte
from .chat_format import to_openai_messages

# Request options passed as SDK arguments; any other config key goes to ``extra_body``.
_SDK_OPTIONS = frozenset({
    "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "seed",
    "presence_penalty", "frequency_penalty", "reasoning_effort", "tool_choice",
    "parallel_tool_calls", "response_format", "user", "logit_bias",
})
CONNECT_TIMEOUT_S = 10.0
_OVERFLOW = re.compile(
    r"context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|"
    r"input is too long|reduce the length",
    re.IGNORECASE,
)


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
    ) -> None:
        register_secret(api_key)
        register_url_secrets(base_url)
        self.provider = provider
        self.base_url = redact_url(base_url)  # what is logged (request/header) and quoted in errors
        self.send_reasoning = send_reasoning
        self.key_env = key_env or PROVIDER_KEY_ENV.get(provider, "DSH_API_KEY")
        options: dict[str, Any] = {}
        if timeout is not None:  # between bytes; connecting gives up sooner (the SDK's default is 5 s)
            options["timeout"] = httpx2.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_S))
        self._client = _Client(
            base_url=base_url, api_key=api_key, max_retries=0, http_client=http_client, **options
        )
        self._tools_key: tuple[ToolSchema, ...] | None = None
        self._tools: list[dict[str, Any]] = []

    async def aclose(self) -> None:
        await self._client.close()

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
        extra: dict[str, Any] = dict(request.config.get("extra_body") or {})
        for key, value in request.config.items():
            if key in _SDK_OPTIONS:
                params[key] = value
            elif key != "extra_body" and value is not None:
                extra[key] = value
        if extra:
            params["extra_body"] = extra
        return params

    def openai_messages(self, messages: Sequence[AnyMessage]) -> list[dict[str, Any]]:
        out = to_openai_messages(messages, include_reasoning=self.send_reasoning)
        if not self.send_reasoning:
            return out
        fixed = []
        for msg in out:
            if msg.get("role") == "assistant":
                if msg.get("tool_calls"):
                    if not isinstance(msg.get("reasoning_content"), str):
                        msg = {**msg, "reasoning_content": ""}
                elif "reasoning_content" in msg:
                    msg = {k: v for k, v in msg.items() if k != "reasoning_content"}
            fixed.append(msg)
        return fixed

    def openai_tools(self, tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
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
        try:
            response = await self._client.chat.completions.create(**params)
        except openai.APIStatusError as exc:
            raise map_status_error(exc, model=request.model, base_url=self.base_url,
                                   key_env=self.key_env) from None
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc) from None
        mark_first_byte()  # the response head has arrived
        try:
            async for raw in response:
                for chunk in acc.feed(raw):
                    yield chunk
        except openai.APIConnectionError as exc:
            raise acc.cut_error(
                f"the connection to {self.base_url} was lost mid-stream after "
                f"{acc.chunks_seen} chunks ({_cause(exc)})"
            ) from None
        except openai.APIError as exc:  # an {"error": ...} event inside the stream
            raise acc.cut_error(f"the provider sent an error mid-stream: {exc.message}",
                                code="SERVER_ERROR") from None
        except ValueError as exc:  # malformed JSON in a data: line
            raise acc.cut_error(f"the provider sent malformed stream data: {exc}",
                                code="SERVER_ERROR") from None
        finally:
            await response.close()
        for chunk in acc.finish(done=saw_done(response)):
            yield chunk

    def _connection_error(self, exc: openai.APIConnectionError) -> ModelError:
        what = "timed out" if isinstance(exc, openai.APITimeoutError) else "failed"
        return ModelError(f"the connection to {self.base_url} {what} ({_cause(exc)})",
                          code="CONNECTION", retryable=True)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return str(exc)
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])[:1000]
    if isinstance(body, str) and body:
        return body[:1000]
    return exc.message[:1000]


def retry_after_ms(headers: httpx2.Headers | dict[str, str]) -> int | None:
    """``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) in milliseconds."""
    value = headers.get("retry-after-ms")
    try:
        if value is not None:
            return max(0, int(float(value)))
        value = headers.get("retry-after")
        if value is None:
            return None
        return max(0, int(float(value) * 1000))
    except ValueError:
        parsed = email.utils.parsedate_tz(value or "")
        if parsed is None:
            return None
        return max(0, int((email.utils.mktime_tz(parsed) - time.time()) * 1000))


def map_status_error(exc: openai.APIStatusError, *, model: str, base_url: str | None,
                     key_env: str = "DSH_API_KEY") -> ModelError:
    """An HTTP error from the provider → a coded ``ModelError`` (never quoting the key)."""
    status = exc.status_code
    detail = _detail(exc)
    code = (exc.code or "").lower()
    where = f"(HTTP {status}): {detail}"
    if status in (401, 403):
        hint = key_env if key_env == "DSH_API_KEY" else f"{key_env} (or DSH_API_KEY)"
        return ModelError(f"the provider refused the API key {where}. Set {hint} "
                          "to a valid key.", code="AUTH", status=status)
    if status == 404 or code == "model_not_found":
        return ModelError(f"model {model!r} is not available at {base_url} {where}. Check the model "
                          "name and the base URL.", code="UNKNOWN_MODEL", status=status)
    if status in (400, 413, 422) and (code == "context_length_exceeded" or _OVERFLOW.search(detail)):
        return ModelError(f"the conversation no longer fits the model's context window {where}",
                          code="CONTEXT_OVERFLOW", status=status)
    if status == 429:
        quota = code == "insufficient_quota"
        return ModelError(f"the provider is rate limiting requests {where}", code="RATE_LIMITED",
                          retryable=not quota, status=status,
                          retry_after_ms=retry_after_ms(exc.response.headers))
    if status >= 500 or status == 408:
        return ModelError(f"the provider failed {where}", code="SERVER_ERROR", retryable=True,
                          status=status, retry_after_ms=retry_after_ms(exc.response.headers))
    return ModelError(f"the provider refused the request {where}", code="BAD_REQUEST", status=status)
