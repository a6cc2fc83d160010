"""Prices and context windows of the models people use (issue 12 item 2).

A dated table of public list prices, in US dollars per million tokens, for input (a cache miss),
cached input (a cache hit) and output, plus each model's context window in tokens — the ``models``
of each row of the provider table (:mod:`dsh_notebook.providers`). The figures were taken from
the providers' public pricing pages **as of 2025-10** (:data:`PRICES_AS_OF`);
they change, so every figure can be overridden by a JSON file named by ``DSH_PRICES_FILE``
(or passed as ``prices_file``)::

    {
      "deepseek:deepseek-chat": {"input": 0.28, "cachedInput": 0.028, "output": 0.42,
                                 "contextWindow": 128000},
      "openai:my-finetune":     {"input": 3.0, "output": 12.0},
      "vllm:qwen3":             {"contextWindow": 32768}
    }

Keys are model ids (``provider:model``; a bare name means ``openai``). A field left out keeps the
built-in figure; ``cachedInput`` left out of a new entry is charged as ``input`` (no discount is
assumed). An entry with only ``contextWindow`` has no price.

Rules: an unknown model has cost ``None`` — never a guess. The context window is, first, the
caller's ``override`` (``--context-window N``), then ``DSH_CONTEXT_WINDOW``, then the prices file,
then the table; else ``None``. A bare name sent to an OpenAI-compatible endpoint (provider
``openai``) also matches the table's DeepSeek names (``deepseek-chat`` through a custom base URL).
Dated snapshots (``gpt-4o-2024-08-06``) are priced as their base model. The scripted teaching
model (``script:*``) runs locally and costs exactly 0.

Usage is disjoint (``Usage.input_tokens`` excludes cached input), so
``cost = input × input_price + cached × cached_price + output × output_price`` (reasoning tokens
are already part of the provider's output count).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..config import positive_int
from ..errors import UserError
from ..providers import PRICES_AS_OF, PROVIDERS
from ..wire.events import Usage

PRICES_FILE_ENV = "DSH_PRICES_FILE"
CONTEXT_WINDOW_ENV = "DSH_CONTEXT_WINDOW"
_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """USD per million tokens. ``cached_input`` is the cache-hit input price."""

    input: float
    cached_input: float
    output: float
    as_of: str = PRICES_AS_OF
    source: str = "built-in"

    def cost(self, usage: Usage) -> float:
        cached = usage.cache_read_tokens or 0
        total = usage.input_tokens * self.input + cached * self.cached_input + usage.output_tokens * self.output
        return total / _MILLION


@dataclass(frozen=True)
class ModelInfo:
    price: Price | None
    context_window: int | None
    note: str = ""


# (provider, model) → figures, as of PRICES_AS_OF: the provider table's known models.
BUILTIN: dict[tuple[str, str], ModelInfo] = {
    (p.prefix, m.name): ModelInfo(Price(m.input, m.cached_input, m.output), m.context_window, m.note)
    for p in PROVIDERS if p.prefix for m in p.models
}

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")  # gpt-4o-2024-08-06, gpt-4-0613
_FREE = Price(0.0, 0.0, 0.0, source="local")
SCRIPT_CONTEXT_WINDOW = 128_000
"""The offline teaching model's nominal context window (a typical model's), so its context fill
can be shown in class; js/src/model/pricing.ts uses the same figure."""


@dataclass(frozen=True)
class Catalog:
    """The built-in table with a prices file's entries laid over it."""

    entries: dict[tuple[str, str], ModelInfo]

    def lookup(self, provider: str, model: str) -> ModelInfo | None:
        provider = provider.lower()
        for name in (model, _SNAPSHOT.sub("", model)):
            info = self.entries.get((provider, name))
            if info is not None:
                return info
            if provider == "openai":  # a bare name on an OpenAI-compatible endpoint
                for (_, known), other in self.entries.items():
                    if known == name:
                        return other
        return None

    def price(self, provider: str, model: str) -> Price | None:
        if provider.lower() == "script":
            return _FREE
        info = self.lookup(provider, model)
        return info.price if info else None

    def context_window(self, provider: str, model: str) -> int | None:
        if provider.lower() == "script":
            return SCRIPT_CONTEXT_WINDOW
        info = self.lookup(provider, model)
        return info.context_window if info else None


def _positive_int(raw: Any, where: str) -> int:
    return positive_int(raw, where, what="a positive whole number of tokens")


def _money(raw: Any, where: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw < float("inf"):
        raise UserError(f"{where} must be a price in USD per million tokens (≥ 0), not {raw!r}", code="BAD_CONFIG")
    return float(raw)


_FIELDS = {"input", "cachedInput", "output", "contextWindow", "note"}


def _entry(base: ModelInfo | None, raw: Any, where: str, source: str) -> ModelInfo:
    if not isinstance(raw, dict):
        raise UserError(f"{where} must be an object like {{\"input\": 0.28, \"output\": 0.42}}", code="BAD_CONFIG")
    unknown = set(raw) - _FIELDS
    if unknown:
        raise UserError(f"{where}: unknown field(s) {sorted(unknown)}; use {sorted(_FIELDS)}", code="BAD_CONFIG")
    price = base.price if base else None
    window = base.context_window if base else None
    priced = {k: _money(raw[k], f"{where}.{k}") for k in ("input", "cachedInput", "output") if k in raw}
    if priced:
        if price is None:
            if "input" not in priced or "output" not in priced:
                raise UserError(f"{where}: a new model needs both \"input\" and \"output\" prices", code="BAD_CONFIG")
            price = Price(priced["input"], priced.get("cachedInput", priced["input"]), priced["output"])
        price = replace(
            price,
            input=priced.get("input", price.input),
            cached_input=priced.get("cachedInput", price.cached_input),
            output=priced.get("output", price.output),
            as_of="prices file",
            source=source,
        )
    if "contextWindow" in raw:
        window = _positive_int(raw["contextWindow"], f"{where}.contextWindow")
    return ModelInfo(price, window, str(raw.get("note", base.note if base else "")))


def load_catalog(prices_file: str | Path | None = None) -> Catalog:
    """The built-in table, overridden by ``prices_file`` (a bad file is a ``BAD_CONFIG`` error)."""
    entries = dict(BUILTIN)
    if prices_file is None or str(prices_file).strip() == "":
        return Catalog(entries)
    path = Path(prices_file).expanduser()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"prices file {path} does not exist ({PRICES_FILE_ENV})", code="BAD_CONFIG") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"prices file {path} is not readable JSON: {exc}", code="BAD_CONFIG") from None
    if not isinstance(data, dict):
        raise UserError(f"prices file {path} must hold one object keyed by provider:model", code="BAD_CONFIG")
    for model_id, raw in data.items():
        provider, sep, name = str(model_id).partition(":")
        key = (provider.lower(), name) if sep and provider and name else ("openai", str(model_id))
        entries[key] = _entry(entries.get(key), raw, f"{path.name}[{model_id!r}]", str(path))
    return Catalog(entries)


_cache: dict[tuple[str, int, int], Catalog] = {}


def default_catalog(prices_file: str | Path | None = None) -> Catalog:
    """The catalog for ``prices_file`` (default ``$DSH_PRICES_FILE``), reloaded when it changes."""
    name = str(prices_file) if prices_file is not None else os.environ.get(PRICES_FILE_ENV, "")
    if not name.strip():
        return _cache.setdefault(("", 0, 0), Catalog(dict(BUILTIN)))
    try:
        st = Path(name).expanduser().stat()
        key = (name, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (name, -1, -1)
    if key not in _cache:
        _cache[key] = load_catalog(name)
    return _cache[key]


def env_context_window(environ: dict[str, str] | None = None) -> int | None:
    """``DSH_CONTEXT_WINDOW`` (unset or blank: ``None``; bad: ``BAD_CONFIG``)."""
    raw = (os.environ if environ is None else environ).get(CONTEXT_WINDOW_ENV, "")
    return _positive_int(raw.strip(), CONTEXT_WINDOW_ENV) if raw.strip() else None


def context_window(provider: str, model: str, override: int | None = None) -> int | None:
    """The context window in tokens: ``override``, ``DSH_CONTEXT_WINDOW``, the prices file, the
    table; ``None`` when unknown."""
    if override is not None:
        return _positive_int(override, "--context-window")
    from_env = env_context_window()
    if from_env is not None:
        return from_env
    return default_catalog().context_window(provider, model)


def price(provider: str, model: str) -> Price | None:
    """The price of ``provider:model`` per million tokens, or ``None`` when unknown."""
    return default_catalog().price(provider, model)


def cost_usd(provider: str, model: str, usage: Usage | None) -> float | None:
    """What ``usage`` cost on ``provider:model`` in USD; ``None`` for an unknown model or usage."""
    if usage is None:
        return None
    p = price(provider, model)
    return None if p is None else p.cost(usage)
