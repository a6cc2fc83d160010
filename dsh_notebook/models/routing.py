"""Model routing: a model id (``provider:model``) → the adapter that serves it (DESIGN §6).

- ``script:<scenario>`` → :class:`~dsh_notebook.models.scripted.ScriptedModel` (offline default);
- ``replay:<path>`` → :class:`~dsh_notebook.models.replay.ReplayModel`: a log's responses in order;
- ``replay:<session id>`` (a saved session under ``$DSH_HOME/sessions``) →
  :class:`~dsh_notebook.models.replay_session.SessionReplayModel`: the origin's response to each
  request with the same messages, until a request diverges (``REPLAY_DIVERGED``);
- ``local:<path>.gguf`` / ``local:smollm2`` → llama.cpp's own server, started on a private Unix
  socket with a key of its own (:mod:`~dsh_notebook.models.local_server`, extra ``[local]``), spoken
  to by the OpenAI adapter with the sampling the model's card recommends (:func:`model_defaults`);
- a hosted provider's ``prefix:<m>`` (``deepseek:<m>``, ``openai:<m>``: the rows of
  :mod:`dsh_notebook.providers`), or any model with a base URL — where the whole id is the
  model name unless it starts with a known provider prefix (``qwen2.5:7b`` stays ``qwen2.5:7b``,
  :func:`~dsh_notebook.config.normalize_model_id`) (``--base-url`` /
  ``DSH_BASE_URL``) → :class:`~dsh_notebook.models.openai_compat.OpenAICompatAdapter`.

Keys: ``DSH_API_KEY`` (``settings.api_key``) wins; else the provider's own variable (its row's
``key_env``: ``DEEPSEEK_API_KEY``, ``OPENAI_API_KEY``) — but only when the request goes to that provider's
own host, so a DeepSeek or OpenAI key is never sent to some other ``base_url``. A custom base URL
without a key gets the placeholder ``"not-needed"`` (vLLM, Ollama and llama.cpp run without
one); a provider's own endpoint without a key is ``UserError(NO_API_KEY)`` naming the variable.

Adapters are imported lazily: ``openai`` is loaded only when a real provider is used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import JsonValue

from ..config import (
    Settings,
    check_base_url,
    model_timeouts,
    normalize_model_id,
    parse_model_id,
)
from ..errors import UserError, register_secret
from ..providers import LOCAL_PREFIXES, by_prefix, hosted, sends_reasoning
from .base import ModelAdapter

PLACEHOLDER_KEY = "not-needed"
LOCAL_PROVIDERS = frozenset(LOCAL_PREFIXES)


def _host(url: str | None) -> str:
    return (urlparse(url).hostname or "").lower() if url else ""


def resolve_key(settings: Settings, provider: str, base_url: str) -> tuple[str | None, str]:
    """The API key for ``provider`` at ``base_url`` and the variable a user should set."""
    row = by_prefix(provider)
    if settings.api_key:
        return settings.api_key, "DSH_API_KEY"
    env = row.key_env if row is not None else None
    if env and row is not None and row.base_url and row.host == _host(base_url):
        key = os.environ.get(env) or None
        register_secret(key)
        return key, env
    return None, "DSH_API_KEY"


def model_defaults(model_id: str) -> dict[str, JsonValue]:
    """The request options a model gets unless ``--option`` sets them (its card's sampling: only
    ``local:`` models known by name have one), without starting anything."""
    try:
        provider, name = parse_model_id(normalize_model_id(model_id, None))
    except UserError:
        return {}
    if provider != "local":
        return {}
    from .local_models import card_options

    return card_options(name)


def compact_prompt(model_id: str) -> bool:
    """Whether ``model_id`` is a small model that gets the compact prompt on a plain chat turn
    (:func:`~.local_models.compact_prompt`; only ``local:`` models known by name), without
    starting anything."""
    try:
        provider, name = parse_model_id(normalize_model_id(model_id, None))
    except UserError:
        return False
    if provider != "local":
        return False
    from .local_models import compact_prompt as named_compact

    return named_compact(name)


def describe_defaults(model_id: str, options: Mapping[str, Any] | None = None) -> str | None:
    """``%dsh config``'s line about :func:`model_defaults`: each value, and which ``options`` (the
    session's ``--option``) override; ``None`` when the model has none."""
    defaults = model_defaults(model_id)
    if not defaults:
        return None
    given = options or {}
    sent = ", ".join(f"{k}={json.dumps(v)}" for k, v in defaults.items() if k not in given) or "none left"
    overridden = ", ".join(k for k in defaults if k in given)
    why = f"{overridden} set by --option" if overridden else "--option KEY=VALUE overrides"
    return f"{sent} (the model card's sampling; {why})"


def resolve_adapter(settings: Settings, model_id: str, *, base_url: str | None = None) -> ModelAdapter:
    """The adapter for ``model_id`` under ``settings`` (``base_url`` overrides the settings')."""
    provider, name = parse_model_id(normalize_model_id(model_id, base_url or settings.base_url))
    if provider == "script":
        from .scripted import ScriptedModel

        return ScriptedModel(name, pace=settings.script_pace)
    if provider == "replay":
        from .replay import ReplayModel

        path = Path(name).expanduser()
        if path.exists():
            return ReplayModel(path)
        by_id = settings.sessions_dir / f"{name}.jsonl"
        if "/" not in name and by_id.is_file():
            from .replay_session import SessionReplayModel

            return SessionReplayModel(by_id, origin_id=name)
        raise UserError(
            f"replay log not found: {path} (nor a saved session {name!r} in {settings.sessions_dir})",
            code="LOG_NOT_FOUND",
        )
    if provider == "local":
        from .local_adapter import local_adapter

        return local_adapter(settings, name)
    custom = base_url or settings.base_url
    if custom is not None:
        custom = check_base_url(custom)
    row = by_prefix(provider)
    url = custom or (row.base_url if row is not None else None)
    if url is None:
        known = ", ".join(sorted({*(p.prefix for p in hosted() if p.base_url and p.prefix), *LOCAL_PROVIDERS}))
        raise UserError(
            f"unknown provider {provider!r} in model id {model_id!r}: use one of {known}, "
            "or give an OpenAI-compatible endpoint with --base-url (or DSH_BASE_URL)",
            code="UNKNOWN_PROVIDER",
        )
    key, env = resolve_key(settings, provider, url)
    if key is None:
        if custom and not (row is not None and row.base_url and row.host == _host(custom)):
            key = PLACEHOLDER_KEY
        else:
            raise UserError(
                f"no API key for {provider}: set {env} (or DSH_API_KEY), e.g. `export {env}=...`, "
                f"or run offline with the embedded model: --model script:auto",
                code="NO_API_KEY",
            )
    from .openai_compat import OpenAICompatAdapter

    first_byte, idle = model_timeouts(settings, url)
    return OpenAICompatAdapter(
        provider, url, key, send_reasoning=sends_reasoning(provider, url), key_env=env, timeout=settings.timeout,
        model=name, first_byte_timeout=first_byte, idle_timeout=idle,
    )
