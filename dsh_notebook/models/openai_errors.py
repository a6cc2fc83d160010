"""HTTP errors of OpenAI-compatible servers → coded :class:`~dsh_notebook.errors.ModelError`.

The context-overflow wordings of every server people run (issue 20 item 4) are ``CONTEXT_OVERFLOW``
(compacted and retried once by the agent, never the generic retry). They are the rows' of the
provider table (:mod:`dsh_notebook.providers`: ``overflow_codes``, ``overflow_wordings``): OpenAI /
DeepSeek (``context_length_exceeded``, "maximum context length"), llama.cpp
(``exceed_context_size_error``, "exceeds the available context size"), vLLM ("This model's maximum
context length is …", "maximum model length"), Ollama ("input length exceeds the context length"),
LM Studio ("… greater than the context length", "the context overflows").
"""

from __future__ import annotations

import email.utils
import time
from typing import Any

import httpx2

from ..errors import ModelError
from ..providers import overflow_codes, overflow_pattern

_OVERFLOW = overflow_pattern()
_OVERFLOW_CODES = overflow_codes()


def _detail(exc: Any) -> str:
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


def is_overflow(status: int | None, code: str, detail: str) -> bool:
    """The server's words for "the request does not fit the context window" (any server's)."""
    if code in _OVERFLOW_CODES:
        return True
    return status in (None, 400, 413, 422, 500) and bool(_OVERFLOW.search(detail))


def map_status_error(exc: Any, *, model: str, base_url: str | None,
                     key_env: str = "DSH_API_KEY") -> ModelError:
    """An HTTP error from the provider → a coded ``ModelError`` (never quoting the key)."""
    status = exc.status_code
    detail = _detail(exc)
    code = str(exc.code or "").lower()
    kind = str(getattr(exc, "type", None) or "").lower()
    where = f"(HTTP {status}): {detail}"
    if status in (401, 403):
        hint = key_env if key_env == "DSH_API_KEY" else f"{key_env} (or DSH_API_KEY)"
        return ModelError(f"the provider refused the API key {where}. Set {hint} "
                          "to a valid key.", code="AUTH", status=status)
    if status == 404 or code == "model_not_found":
        return ModelError(f"model {model!r} is not available at {base_url} {where}. Check the model "
                          "name and the base URL.", code="UNKNOWN_MODEL", status=status)
    if is_overflow(status, code, detail) or is_overflow(status, kind, ""):
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
