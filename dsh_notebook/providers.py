"""The provider table (issue 40 item 2): every OpenAI-compatible provider and server, one row each.

Two kinds of row, one type (:class:`Provider`):

- a **hosted provider**, named by its model-id prefix (``deepseek:deepseek-chat``): the variable
  its key is read from, its own endpoint, the models it is known to serve (list prices and context
  windows as of :data:`PRICES_AS_OF`; the first suggested model is its default), its name in
  telemetry (``gen_ai.provider.name``), its quirks and the words it uses for "the prompt does not
  fit the context window";
- a **self-hosted server** reached with ``--base-url`` (llama.cpp, vLLM, LM Studio, Ollama): no
  prefix, no key variable; how it reports its context window (one HTTP probe and the reader of its
  JSON; the first row, in table order, whose probe answers wins) and its overflow wordings.

Everything that depends on a provider derives from :data:`PROVIDERS`: the settings and the known
prefixes (:mod:`.config`), routing and key resolution (:mod:`.models.routing`), the adapter's
own-endpoint checks (:mod:`.models.openai_compat`), the window probes
(:mod:`.models.server_window`, and the probe routes of :mod:`.testing.openai_server`), the overflow
wordings (:mod:`.models.openai_errors`), the price catalog (:mod:`.session.catalog`), telemetry
(:mod:`.observe.otel_spans`), model-id completion and the test suite's key scrub
(``tests/conftest.py``). **Adding an OpenAI-compatible provider is one row here and its test row in
``tests/models/test_provider_table.py``**, whose conformance test runs every row through the real
``openai`` SDK against a loopback server.

``script:``, ``replay:`` and ``local:`` (:data:`LOCAL_PREFIXES`) are not rows: they name adapters
of their own (the scripted model, a log's replay, llama.cpp on a private socket), not endpoints.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

PRICES_AS_OF = "2025-10"
"""When the list prices and windows of the rows were taken from the providers' pricing pages."""
LOCAL_PREFIXES: tuple[str, ...] = ("script", "replay", "local")


@dataclass(frozen=True)
class KnownModel:
    """A model a hosted provider serves: USD per million tokens (input = a cache miss, cached
    input = a cache hit, output) and its context window in tokens, as of :data:`PRICES_AS_OF`."""

    name: str
    input: float
    cached_input: float
    output: float
    context_window: int
    note: str = ""


WindowReader = Callable[[Any, str], "int | None"]


@dataclass(frozen=True)
class WindowProbe:
    """One request that asks a server for a model's context window, and the reader of its answer
    (``read(json_body, model)``; ``None``: it did not say). ``path`` is under the server's root
    (``at_root``: ``http://h:p``) or under the base URL (``http://h:p/v1``); ``POST`` sends
    ``{"model": M}``."""

    method: Literal["GET", "POST"]
    path: str
    read: WindowReader
    at_root: bool = True

    def url(self, base_url: str) -> str:
        return (server_root(base_url) if self.at_root else base_url.rstrip("/")) + self.path

    def routes(self) -> tuple[tuple[str, str], ...]:
        """The ``(method, path)`` a loopback server at ``http://h:p/v1`` sees for this probe (a
        base-URL probe also without ``/v1``, for servers mounted at their root)."""
        return ((self.method, self.path),) if self.at_root else ((self.method, "/v1" + self.path), (self.method, self.path))


@dataclass(frozen=True)
class Provider:
    """One row of the table (see the module docstring)."""

    name: str  # the row's id (a hosted provider's prefix; a server's name)
    display_name: str
    prefix: str | None = None  # the model-id prefix; None: reached only with --base-url
    key_env: str | None = None  # the variable its key is read from (else DSH_API_KEY)
    base_url: str | None = None  # its own endpoint
    domain: str | None = None  # a custom base URL under this domain is this provider (its quirks apply)
    suggested: tuple[str, ...] = ()  # model names offered by completion; the first is the default
    models: tuple[KnownModel, ...] = ()  # the price catalog's built-in entries
    otel_name: str | None = None  # gen_ai.provider.name (OpenTelemetry GenAI well-known value)
    send_reasoning: bool = False  # tool-call turns carry reasoning_content back (DeepSeek thinking mode)
    window_probe: WindowProbe | None = None
    overflow_codes: tuple[str, ...] = ()  # error codes / types that mean CONTEXT_OVERFLOW
    overflow_wordings: tuple[str, ...] = ()  # regular expressions (case-insensitive) on the error text

    @property
    def default_model(self) -> str | None:
        return self.suggested[0] if self.suggested else None

    @property
    def host(self) -> str:
        return _host(self.base_url)

    def serves(self, base_url: str | None) -> bool:
        """Whether ``base_url`` is this provider's (its own host, or a host under its domain)."""
        host = _host(base_url)
        return bool(host) and (host == self.host or (self.domain is not None and (
            host == self.domain or host.endswith("." + self.domain))))

    def overflows(self, code: str, detail: str) -> bool:
        """Whether an error with this ``code`` (or type) and text is this row's "does not fit"."""
        return code in self.overflow_codes or any(re.search(w, detail, re.IGNORECASE) for w in self.overflow_wordings)


# --- what servers answer about their window (pure readers of JSON) ---------------------------------


def server_root(base_url: str) -> str:
    """``http://h:p/v1`` → ``http://h:p`` (the server's own routes live at its root)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


def from_props(body: Any, model: str = "") -> int | None:
    """llama.cpp's ``GET /props``: ``default_generation_settings.n_ctx`` (older builds: ``n_ctx``)."""
    if not isinstance(body, dict):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, dict) and positive(settings.get("n_ctx")):
        return positive(settings.get("n_ctx"))
    return positive(body.get("n_ctx"))


def _entry(body: Any, model: str) -> dict[str, object] | None:
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model]
    if named:
        return named[0]
    return entries[0] if len(entries) == 1 else None


def from_vllm(body: Any, model: str) -> int | None:
    """vLLM's ``GET /v1/models``: the model's ``max_model_len``."""
    entry = _entry(body, model)
    return positive(entry.get("max_model_len")) if entry else None


def from_lmstudio(body: Any, model: str) -> int | None:
    """LM Studio's ``GET /api/v0/models``: ``loaded_context_length``, else ``max_context_length``."""
    entry = _entry(body, model)
    if not entry:
        return None
    return positive(entry.get("loaded_context_length")) or positive(entry.get("max_context_length"))


def from_ollama(body: Any, model: str = "") -> int | None:
    """Ollama's ``POST /api/show``: ``num_ctx`` in its ``parameters``, else ``<arch>.context_length``."""
    if not isinstance(body, dict):
        return None
    params = body.get("parameters")
    if isinstance(params, str):
        match = re.search(r"(?m)^\s*num_ctx\s+(\d+)", params)
        if match:
            return positive(int(match.group(1)))
    info = body.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and positive(value):
                return positive(value)
    return None


# --- the table -------------------------------------------------------------------------------------

_GPT5 = "input at most 272K"  # GPT-5 family: a 400K window of which at most 272K input (128K output)

PROVIDERS: tuple[Provider, ...] = (
    Provider(
        "deepseek", "DeepSeek", prefix="deepseek", key_env="DEEPSEEK_API_KEY", base_url="https://api.deepseek.com",
        domain="deepseek.com", suggested=("deepseek-chat", "deepseek-reasoner"), otel_name="deepseek",
        send_reasoning=True,
        # V3.2-Exp prices (2025-09-29), the same for chat and reasoner
        models=(KnownModel("deepseek-chat", 0.28, 0.028, 0.42, 128_000),
                KnownModel("deepseek-reasoner", 0.28, 0.028, 0.42, 128_000)),
        overflow_wordings=(r"maximum context length",),
    ),
    Provider(
        "openai", "OpenAI", prefix="openai", key_env="OPENAI_API_KEY", base_url="https://api.openai.com/v1",
        domain="openai.com", suggested=("gpt-4o-mini", "gpt-4o"), otel_name="openai",
        models=(KnownModel("gpt-4o", 2.50, 1.25, 10.00, 128_000), KnownModel("gpt-4o-mini", 0.15, 0.075, 0.60, 128_000),
                KnownModel("gpt-4.1", 2.00, 0.50, 8.00, 1_047_576),
                KnownModel("gpt-4.1-mini", 0.40, 0.10, 1.60, 1_047_576),
                KnownModel("gpt-4.1-nano", 0.10, 0.025, 0.40, 1_047_576),
                KnownModel("o3", 2.00, 0.50, 8.00, 200_000, "price after the 2025-06 cut"),
                KnownModel("o4-mini", 1.10, 0.275, 4.40, 200_000),
                KnownModel("gpt-5", 1.25, 0.125, 10.00, 400_000, _GPT5),
                KnownModel("gpt-5-mini", 0.25, 0.025, 2.00, 400_000, _GPT5),
                KnownModel("gpt-5-nano", 0.05, 0.005, 0.40, 400_000, _GPT5)),
        overflow_codes=("context_length_exceeded",),
        overflow_wordings=(r"context[ _-]?(length|window|size)", r"maximum context", r"too many tokens",
                           r"prompt is too long", r"input is too long", r"reduce the length"),
    ),
    Provider(
        "llama.cpp", "llama.cpp server", window_probe=WindowProbe("GET", "/props", from_props),
        overflow_codes=("exceed_context_size_error",),
        overflow_wordings=(r"exceeds? the available context", r"exceed_context_size", r"not enough context",
                           r"n_ctx", r"n_keep"),
    ),
    Provider(
        "vllm", "vLLM", window_probe=WindowProbe("GET", "/models", from_vllm, at_root=False),
        overflow_wordings=(r"maximum model length", r"max_model_len"),
    ),
    Provider(
        "lmstudio", "LM Studio", window_probe=WindowProbe("GET", "/api/v0/models", from_lmstudio),
        # "Trying to keep the first N tokens when context the overflows. However, the model is loaded
        # with context length of only M tokens"
        overflow_wordings=(r"context overflow", r"context (the )?overflows", r"greater than the context length"),
    ),
    Provider(
        "ollama", "Ollama", window_probe=WindowProbe("POST", "/api/show", from_ollama),
        overflow_wordings=(r"exceeds? (the )?(context|num_ctx)", r"input length exceeds"),
    ),
)


# --- what the rest of the package reads --------------------------------------------------------------


def _host(url: str | None) -> str:
    try:
        return (urlsplit(url).hostname or "").lower() if url else ""
    except ValueError:
        return ""


def hosted() -> tuple[Provider, ...]:
    """The rows named by a model-id prefix, in table order."""
    return tuple(p for p in PROVIDERS if p.prefix)


def by_prefix(prefix: str) -> Provider | None:
    """The hosted provider ``prefix:`` names (``None``: no row has it)."""
    return next((p for p in PROVIDERS if p.prefix and p.prefix == prefix.lower()), None)


def known_prefixes() -> frozenset[str]:
    """Every prefix a model id may start with (with a base URL anything else is part of the name)."""
    return frozenset({*(p.prefix for p in hosted() if p.prefix), *LOCAL_PREFIXES})


def key_variables() -> tuple[str, ...]:
    """The providers' own key variables (``DEEPSEEK_API_KEY`` …), in table order."""
    return tuple(p.key_env for p in hosted() if p.key_env)


def own_hosts() -> frozenset[str]:
    """The hosts of the providers' own endpoints (never probed for a window)."""
    return frozenset(p.host for p in PROVIDERS if p.base_url)


def own_base_url(prefix: str) -> str | None:
    row = by_prefix(prefix)
    return row.base_url if row else None


def telemetry_name(prefix: str) -> str:
    """``gen_ai.provider.name`` of requests sent as ``prefix:`` (the prefix itself for the rest)."""
    row = by_prefix(prefix)
    return row.otel_name if row is not None and row.otel_name else prefix


def sends_reasoning(prefix: str, base_url: str | None) -> bool:
    """Whether requests must carry ``reasoning_content`` back (a row with that quirk, named by
    ``prefix`` or serving ``base_url``)."""
    return any(p.send_reasoning and (p.prefix == prefix or p.serves(base_url)) for p in PROVIDERS)


def window_probes() -> tuple[WindowProbe, ...]:
    """The servers' window probes, in table order (the first that answers wins)."""
    return tuple(p.window_probe for p in PROVIDERS if p.window_probe is not None)


def overflow_codes() -> frozenset[str]:
    return frozenset(c for p in PROVIDERS for c in p.overflow_codes)


def overflow_pattern() -> re.Pattern[str]:
    """Every row's overflow wording as one case-insensitive pattern."""
    return re.compile("|".join(f"(?:{w})" for p in PROVIDERS for w in p.overflow_wordings), re.IGNORECASE)


__all__ = [
    "LOCAL_PREFIXES", "PRICES_AS_OF", "PROVIDERS", "KnownModel", "Provider", "WindowProbe", "by_prefix",
    "from_lmstudio", "from_ollama", "from_props", "from_vllm", "hosted", "key_variables", "known_prefixes",
    "overflow_codes", "overflow_pattern", "own_base_url", "own_hosts", "positive", "sends_reasoning", "server_root",
    "telemetry_name", "window_probes",
]  # fmt: skip
