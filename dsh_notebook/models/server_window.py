"""The context window a local or self-hosted OpenAI-compatible server reports (issue 20 item 3).

Asked once per (endpoint, model) and cached for the process; every probe is short (a few seconds
at most, all asked at once) and any failure is ``None`` — the catalog then decides:

- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``);
- vLLM: ``GET /v1/models`` → the model's ``max_model_len``;
- LM Studio: ``GET /api/v0/models`` → the model's ``loaded_context_length`` / ``max_context_length``;
- Ollama: ``POST /api/show {"model": M}`` → ``num_ctx`` in its ``parameters``, else
  ``model_info["<arch>.context_length"]``.

The first of these, in that order, that answers with a positive integer wins. The providers' own
endpoints (api.openai.com, api.deepseek.com) are never probed.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

PROBE_TIMEOUT_S = 3.0
_cache: dict[tuple[str, str], int | None] = {}
_pending: dict[tuple[str, str], asyncio.Future[int | None]] = {}


def server_root(base_url: str) -> str:
    """``http://h:p/v1`` → ``http://h:p`` (the server's own routes live at its root)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def from_props(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return _positive(settings.get("n_ctx"))
    return _positive(body.get("n_ctx"))


def _entry(body: Any, model: str) -> dict[str, Any] | None:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model]
    if named:
        return named[0]
    return entries[0] if len(entries) == 1 else None


def from_vllm(body: Any, model: str) -> int | None:
    entry = _entry(body, model)
    return _positive(entry.get("max_model_len")) if entry else None


def from_lmstudio(body: Any, model: str) -> int | None:
    entry = _entry(body, model)
    if not entry:
        return None
    return _positive(entry.get("loaded_context_length")) or _positive(entry.get("max_context_length"))


def from_ollama(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    params = body.get("parameters")
    if isinstance(params, str):
        match = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params)
        if match:
            return _positive(int(match.group(1)))
    info = body.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and _positive(value):
                return _positive(value)
    return None


async def _ask(client: httpx2.AsyncClient, method: str, url: str, json: Any = None) -> Any:
    try:
        response = await client.request(method, url, json=json)
        if response.status_code != 200:
            return None
        return response.json()
    except Exception:  # any failure (refused, timeout, not JSON) is simply "no answer"
        return None


async def probe_window(base_url: str, model: str, *, timeout: float = PROBE_TIMEOUT_S, api_key: str | None = None,
                       transport: httpx2.AsyncBaseTransport | None = None) -> int | None:
    """Ask the server at ``base_url`` for ``model``'s context window (uncached). ``api_key``: the
    key the chat requests use (a vLLM started with ``--api-key`` guards ``/v1/models`` too)."""
    root = server_root(base_url)
    v1 = base_url.rstrip("/")
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx2.AsyncClient(timeout=timeout, transport=transport, headers=headers) as client:
        props, models, lms, show = await asyncio.gather(
            _ask(client, "GET", f"{root}/props"),
            _ask(client, "GET", f"{v1}/models"),
            _ask(client, "GET", f"{root}/api/v0/models"),
            _ask(client, "POST", f"{root}/api/show", {"model": model}),
        )
    readers: list[Callable[[], int | None]] = [
        lambda: from_props(props), lambda: from_vllm(models, model),
        lambda: from_lmstudio(lms, model), lambda: from_ollama(show),
    ]
    for read in readers:
        window = read()
        if window:
            return window
    return None


def cached_window(base_url: str | None, model: str | None) -> int | None:
    """The window found before for (endpoint, model), without asking (``None``: not known)."""
    return _cache.get((base_url or "", model or ""))


async def server_window(base_url: str | None, model: str | None,
                        probe: Callable[[str, str], Awaitable[int | None]] = probe_window) -> int | None:
    """The window of ``model`` at ``base_url``: asked once per (endpoint, model), then cached;
    concurrent callers share one probe (``probe(base_url, model)``)."""
    if not base_url or not model:
        return None
    key = (base_url, model)
    if key in _cache:
        return _cache[key]
    pending = _pending.get(key)
    if pending is None:
        pending = asyncio.ensure_future(probe(base_url, model))
        _pending[key] = pending
        try:
            _cache[key] = await asyncio.shield(pending)
        finally:
            _pending.pop(key, None)
        return _cache[key]
    return await asyncio.shield(pending)
