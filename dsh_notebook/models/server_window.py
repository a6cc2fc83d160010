"""The context window a local or self-hosted OpenAI-compatible server reports (issue 20 item 3).

Asked once per (endpoint, model) and cached for the process; every probe is short (a few seconds
at most, all asked at once) and any failure is ``None`` — the catalog then decides. The probes are
the self-hosted rows' of the provider table (:func:`dsh_notebook.providers.window_probes`):

- llama.cpp: ``GET /props`` → ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``);
- vLLM: ``GET /v1/models`` → the model's ``max_model_len``;
- LM Studio: ``GET /api/v0/models`` → the model's ``loaded_context_length`` / ``max_context_length``;
- Ollama: ``POST /api/show {"model": M}`` → ``num_ctx`` in its ``parameters``, else
  ``model_info["<arch>.context_length"]``.

The first of these, in table order, that answers with a positive integer wins. The providers' own
endpoints (api.openai.com, api.deepseek.com: :func:`~dsh_notebook.providers.own_hosts`) are never
probed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from ..providers import from_props, server_root, window_probes

PROBE_TIMEOUT_S = 3.0
_cache: dict[tuple[str, str], int | None] = {}
_pending: dict[tuple[str, str], asyncio.Future[int | None]] = {}


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
    probes = window_probes()
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx2.AsyncClient(timeout=timeout, transport=transport, headers=headers) as client:
        answers = await asyncio.gather(*(
            _ask(client, p.method, p.url(base_url), {"model": model} if p.method == "POST" else None) for p in probes))
    for probe, body in zip(probes, answers, strict=True):
        window = probe.read(body, model)
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


__all__ = ["cached_window", "from_props", "probe_window", "server_root", "server_window"]
