"""Configuration from the environment (DESIGN §6): model, base URL, API key, home.

``DSH_MODEL`` (default ``script:auto``), ``DSH_BASE_URL``, ``DSH_API_KEY`` (else the provider's
usual variable, its row's ``key_env`` in :mod:`.providers`: ``DEEPSEEK_API_KEY``, ``OPENAI_API_KEY``),
``DSH_HOME`` (default ``~/.dsh``; session logs under ``$DSH_HOME/sessions/``), the model timeouts ``DSH_FIRST_BYTE_TIMEOUT`` (seconds
a request waits for the server's first chunk; default ``DSH_TIMEOUT`` when set, else 600 for a
loopback server, which may spend minutes on CPU prompt processing, else 120) and ``DSH_IDLE_TIMEOUT`` (seconds between two
chunks; default ``DSH_TIMEOUT``, else 120) — either fails ``MODEL_TIMEOUT``, and there is no total
timeout on a response still arriving —, ``DSH_MAX_TOKENS`` (the output limit of every request;
default: derived from the window), ``DSH_MCP_TIMEOUT``
(seconds per MCP tool call, default 60), ``DSH_MCP_TRUST_READONLY=1`` (MCP tools annotated
read-only run without asking), the turn budgets
``DSH_MAX_STEPS`` (model requests per turn, default 50; 0: unbounded) and ``DSH_MAX_TIME``
(seconds per turn), ``DSH_POLICY_FILE`` (approval rules, :mod:`dsh_notebook.tools.rules`) and
``DSH_COMPACT_THRESHOLD`` (compact the context above this share of the model's window, default
0.8) and ``DSH_RETRY_DELAY`` (seconds before the first retry of a failed model request, doubled at
each further attempt up to 30 s; default 0.5; ``0``: retry at once — a server's own Retry-After is
still honoured). The key is never printed: :meth:`Settings.describe` shows it only as set / not set.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from .errors import ErrorCode, UserError, register_secret
from .errors import register_secret as _register
from .providers import by_prefix, key_variables, known_prefixes, own_base_url

DEFAULT_MODEL = "script:auto"
DEFAULT_TIMEOUT_S = 120.0
LOOPBACK_FIRST_BYTE_TIMEOUT_S = 600.0  # CPU prompt processing on a local server can take minutes
DEFAULT_MCP_TIMEOUT_S = 60.0
DEFAULT_MAX_STEPS = 50
DEFAULT_COMPACT_THRESHOLD = 0.8
DEFAULT_SCRIPT_PACE_S = 0.02  # the scripted model streams at a pace a class can follow
MAX_SCRIPT_PACE_S = 10.0
DEFAULT_RETRY_DELAY_S = 0.5  # the first retry of a failed model request; doubled at each further one
MAX_RETRY_DELAY_S = 30.0  # the cap of every retry delay (AgentConfig.retry_cap_ms)
# Upper bounds of the numeric flags and variables (issue 35: `--max-tokens` with 23 digits was
# accepted and sent): past them a value is a coded BAD_CONFIG / BAD_FLAG error, not a request.
MAX_COUNT = 1_000_000_000  # any positive count: context windows (the largest are ~10M tokens), threads
MAX_OUTPUT_TOKENS = 10_000_000
MAX_STEPS = 1_000_000
MAX_REPEATS = 10_000
MAX_SECONDS = 366 * 24 * 3600.0  # a turn budget or a model timeout: at most a year


_SECRET_PARAM = re.compile(r"(?i)token|key|secret|pass|auth|sig|credential|session")
MASK = "***"


def redact_url(url: str | None) -> str | None:
    """``url`` with its credentials masked: ``user:***@``, a bare ``token@``, and the values of
    query parameters named like secrets (``token``, ``key``, ``api_key``, ``password`` ...).
    Safe on malformed URLs (they are masked crudely)."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@]*@", f"//{MASK}@", url.split("?", 1)[0]) + ("?" + MASK if "?" in url else "")
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _pw = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if sep else f"{MASK}@{hostport}"
    query = "&".join(
        f"{k}={MASK}" if sep and _SECRET_PARAM.search(k) else f"{k}{sep}{v}"
        for k, sep, v in (pair.partition("=") for pair in parts.query.split("&") if pair)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def register_url_secrets(url: str | None) -> None:
    """Remember the credentials inside ``url`` so :func:`~.errors.redact` masks them anywhere
    (values of 8 characters or more: a shorter one would mask ordinary words in any text)."""
    if not url:
        return

    def register_secret(value: str) -> None:
        if len(value) >= 8:
            _register(value)

    try:
        parts = urlsplit(url)
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        user, sep, pw = userinfo.partition(":")
        register_secret(unquote(pw) if sep else unquote(user))
        register_secret(pw if sep else user)
    for k, sep, v in (pair.partition("=") for pair in parts.query.split("&") if pair):
        if sep and _SECRET_PARAM.search(k):
            register_secret(unquote(v))
            register_secret(v)


def check_base_url(url: str) -> str:
    """A usable OpenAI-compatible base URL, or ``UserError(BAD_BASE_URL)`` saying why."""
    shown = repr(redact_url(url.replace("\x00", "\\0")))
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        what = "a NUL byte" if "\x00" in url else "a control character"
        raise UserError(f"the base URL {shown} contains {what}", code="BAD_BASE_URL")
    try:
        parts = urlsplit(url.strip())
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        raise UserError(f"the base URL {shown} is malformed ({exc})", code="BAD_BASE_URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise UserError(f"the base URL {shown} is not an http(s) URL with a host, e.g. "
                        "http://localhost:11434/v1", code="BAD_BASE_URL")
    register_url_secrets(url)
    return url.strip()
KNOWN_PROVIDERS = known_prefixes()
"""The prefixes a model id may start with (the provider table's and ``script``, ``replay``,
``local``); with a base URL anything else is part of the name."""


def normalize_model_id(model_id: str, base_url: str | None) -> str:
    """With a base URL the whole value is the model name unless it starts with a known provider
    prefix (``openai:``, ``deepseek:``, ``script:``, ``replay:``): ``qwen2.5:7b`` becomes
    ``openai:qwen2.5:7b`` (an OpenAI-compatible model named ``qwen2.5:7b``). Without a base URL
    the id is returned unchanged (``provider:model``)."""
    stripped = model_id.strip()
    provider, sep, _ = stripped.partition(":")
    if base_url and sep and provider.lower() not in KNOWN_PROVIDERS:
        return f"openai:{stripped}"
    return model_id


def parse_model_id(model_id: str) -> tuple[str, str]:
    """Split ``provider:model``. A bare name means an OpenAI-compatible model (``openai``)."""
    model_id = model_id.strip()
    if not model_id:
        raise UserError("empty model id; use provider:model, e.g. deepseek:deepseek-chat", code="BAD_MODEL")
    provider, sep, name = model_id.partition(":")
    if not sep:
        return "openai", model_id
    if not provider or not name:
        raise UserError(f"bad model id {model_id!r}; use provider:model", code="BAD_MODEL")
    return provider.lower(), name


@dataclass(frozen=True)
class Settings:
    """The effective configuration of one run."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    home: Path = field(default_factory=lambda: Path("~/.dsh").expanduser())
    explicit_model: bool = False
    timeout: float = DEFAULT_TIMEOUT_S  # per model-request read/write timeout, seconds
    mcp_trust_readonly: bool = False  # MCP tools annotated readOnlyHint run without asking
    mcp_timeout: float = DEFAULT_MCP_TIMEOUT_S  # seconds an MCP tool call may take
    max_steps: int | None = DEFAULT_MAX_STEPS  # turn budget: model requests per turn (None: unbounded)
    max_time: float | None = None  # turn budget: seconds per turn (None: unbounded)
    policy_file: str | None = None  # approval rules (a JSON list of {tool, pattern, action})
    compact_threshold: float = DEFAULT_COMPACT_THRESHOLD  # compact above this share of the window
    max_tokens: int | None = None  # the output limit of every request (None: derived from the window)
    first_byte_timeout: float | None = None  # seconds to the first chunk (None: by the base URL)
    idle_timeout: float | None = None  # seconds between chunks (None: ``timeout``)
    explicit_timeout: bool = False  # DSH_TIMEOUT was set: it is also the loopback first-byte default
    script_pace: float = DEFAULT_SCRIPT_PACE_S  # the scripted model's pause before each chunk, seconds
    retry_delay: float = DEFAULT_RETRY_DELAY_S  # seconds before a failed model request's first retry

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"

    @property
    def provider(self) -> str:
        return parse_model_id(self.model)[0]

    def resolved_key(self) -> str | None:
        """The API key for this model: ``DSH_API_KEY``-style explicit key, else the provider's."""
        if self.api_key:
            return self.api_key
        row = by_prefix(self.provider)
        env = row.key_env if row is not None else None
        key = os.environ.get(env) if env else None
        register_secret(key)
        return key

    def resolved_base_url(self) -> str | None:
        return self.base_url or own_base_url(self.provider)

    def with_overrides(
        self, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None
    ) -> Settings:
        return replace(
            self,
            model=model or self.model,
            base_url=base_url or self.base_url,
            api_key=api_key or self.api_key,
            explicit_model=self.explicit_model or bool(model),
        )

    def describe(self) -> dict[str, str]:
        """What ``%dsh config`` shows. The key only as set / not set."""
        return {
            "model": self.model,
            "base_url": redact_url(self.resolved_base_url()) or "(none: embedded scripted model)",
            "home": str(self.home),
            "sessions": str(self.sessions_dir),
            "api_key": "set" if self.resolved_key() else "not set",
        }


def settings_from_env(environ: dict[str, str] | None = None) -> Settings:
    env = os.environ if environ is None else environ
    key = env.get("DSH_API_KEY") or None
    register_secret(key)
    for name in key_variables():
        register_secret(env.get(name))
    register_url_secrets(env.get("DSH_BASE_URL"))
    home = Path(env.get("DSH_HOME") or "~/.dsh").expanduser()
    model = env.get("DSH_MODEL") or DEFAULT_MODEL
    return Settings(
        model=model,
        base_url=env.get("DSH_BASE_URL") or None,
        api_key=key,
        home=home,
        explicit_model=bool(env.get("DSH_MODEL")),
        timeout=_timeout(env.get("DSH_TIMEOUT")),
        explicit_timeout=bool((env.get("DSH_TIMEOUT") or "").strip()),
        mcp_trust_readonly=(env.get("DSH_MCP_TRUST_READONLY") or "").strip().lower() in ("1", "true", "yes", "on"),
        mcp_timeout=_timeout(env.get("DSH_MCP_TIMEOUT"), DEFAULT_MCP_TIMEOUT_S, "DSH_MCP_TIMEOUT"),
        max_steps=parse_max_steps(env.get("DSH_MAX_STEPS"), "DSH_MAX_STEPS", DEFAULT_MAX_STEPS),
        max_time=parse_max_time(env.get("DSH_MAX_TIME"), "DSH_MAX_TIME"),
        policy_file=env.get("DSH_POLICY_FILE") or None,
        compact_threshold=_threshold(env.get("DSH_COMPACT_THRESHOLD")),
        max_tokens=parse_max_tokens(env.get("DSH_MAX_TOKENS"), "DSH_MAX_TOKENS"),
        first_byte_timeout=parse_timeout(env.get("DSH_FIRST_BYTE_TIMEOUT"), "DSH_FIRST_BYTE_TIMEOUT"),
        idle_timeout=parse_timeout(env.get("DSH_IDLE_TIMEOUT"), "DSH_IDLE_TIMEOUT"),
        script_pace=parse_pace(env.get("DSH_SCRIPT_PACE")),
        retry_delay=parse_retry_delay(env.get("DSH_RETRY_DELAY")),
    )


def is_loopback(url: str | None) -> bool:
    """Whether ``url`` points at this machine (``localhost``, ``127.x``, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower() if url else ""
    return host in ("localhost", "::1", "0.0.0.0") or host.startswith("127.") or host.endswith(".localhost")


def model_timeouts(settings: Settings, base_url: str | None) -> tuple[float, float]:
    """(first-byte, idle) timeouts in seconds for requests to ``base_url`` under ``settings``."""
    idle = settings.idle_timeout or settings.timeout
    first = settings.first_byte_timeout
    if first is None:
        loopback = is_loopback(base_url) and not settings.explicit_timeout
        first = LOOPBACK_FIRST_BYTE_TIMEOUT_S if loopback else settings.timeout
    return first, idle


def positive_int(raw: object, name: str, *, what: str = "a positive whole number", code: ErrorCode = "BAD_CONFIG",
                 most: int = MAX_COUNT) -> int:
    """``raw`` (an int or its text) as a whole number in ``1..most``, else a coded ``UserError``:
    "``name`` must be ``what``, not ``raw``". The one parser of the positive counts read from
    the environment, flags and the price catalog (windows, threads)."""
    value = _whole(raw, 0)
    if not 0 < value <= most:
        raise UserError(f"{name} must be {what} (at most {most:,}), not {_shown(raw)}", code=code)
    return value


def _whole(raw: object, bad: int) -> int:
    """``raw`` (an int or its text) as an int, else ``bad``."""
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        return bad
    try:
        return int(raw)
    except ValueError:  # not a number, or more digits than Python reads (4,300)
        return bad


def _seconds(raw: object, bad: float) -> float:
    try:
        return float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return bad


def _shown(raw: object) -> str:
    """``raw`` as an error quotes it: a few dozen characters, not a 4,000-digit number."""
    text = repr(raw)
    return text if len(text) <= 40 else f"{text[:30]}… ({len(text)} characters)"


def parse_max_tokens(raw: str | int | None, name: str = "--max-tokens") -> int | None:
    """An output limit in tokens: a positive integer; unset or blank: ``None`` (the default)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = _whole(raw, 0)
    if not 0 < value <= MAX_OUTPUT_TOKENS:
        raise UserError(f"{name} must be a positive number of tokens (at most {MAX_OUTPUT_TOKENS:,}), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value


def parse_max_repeats(raw: str | int | None, name: str = "--max-repeats") -> int | None:
    """How many identical tool calls answered identically in a row are tolerated (``0``: the guard is off)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = _whole(raw, -1)
    if not 0 <= value <= MAX_REPEATS:
        raise UserError(f"{name} must be a whole number of repeats up to {MAX_REPEATS:,} (0: no guard), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value


def parse_timeout(raw: str | float | None, name: str) -> float | None:
    """A positive number of seconds; unset or blank: ``None`` (the default)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = _seconds(raw, 0.0)
    if not 0 < value <= MAX_SECONDS:
        raise UserError(f"{name} must be a positive number of seconds (at most {MAX_SECONDS:,.0f}), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value


def parse_max_steps(raw: str | int | None, name: str = "--max-steps", default: int | None = None) -> int | None:
    """A step budget: a positive integer; ``0`` means unbounded; unset or blank: ``default``."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    value = _whole(raw, -1)
    if not 0 <= value <= MAX_STEPS:
        raise UserError(f"{name} must be a whole number of steps up to {MAX_STEPS:,} (0: no limit), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value or None


def parse_max_time(raw: str | float | None, name: str = "--max-time") -> float | None:
    """A time budget in seconds: positive; ``0`` means unbounded; unset or blank: none."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    value = _seconds(raw, -1.0)
    if not 0 <= value <= MAX_SECONDS:
        raise UserError(f"{name} must be a number of seconds up to {MAX_SECONDS:,.0f} (0: no limit), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value or None


def parse_pace(raw: str | None, name: str = "DSH_SCRIPT_PACE") -> float:
    """The scripted model's pause before each chunk: seconds in [0, 10] (``0``: no pause, as fast
    as the loop goes); unset or blank: ``DEFAULT_SCRIPT_PACE_S``, a pace a class can read."""
    if raw is None or not raw.strip():
        return DEFAULT_SCRIPT_PACE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= MAX_SCRIPT_PACE_S:
        raise UserError(f"{name} must be seconds between 0 and {MAX_SCRIPT_PACE_S:g} (0: no pause), not {raw!r}",
                        code="BAD_CONFIG")
    return value


def parse_retry_delay(raw: str | None, name: str = "DSH_RETRY_DELAY") -> float:
    """Seconds before the first retry of a failed model request, in [0, 30] (``0``: at once);
    unset or blank: ``DEFAULT_RETRY_DELAY_S``."""
    if raw is None or not raw.strip():
        return DEFAULT_RETRY_DELAY_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= MAX_RETRY_DELAY_S:
        raise UserError(f"{name} must be seconds between 0 and {MAX_RETRY_DELAY_S:g} (0: retry at once), "
                        f"not {raw!r}", code="BAD_CONFIG")
    return value


def _threshold(raw: str | None) -> float:
    if not raw or not raw.strip():
        return DEFAULT_COMPACT_THRESHOLD
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise UserError(f"DSH_COMPACT_THRESHOLD must be a share of the context window in (0, 1], not {raw!r}",
                        code="BAD_CONFIG")
    return value


def _timeout(raw: str | None, default: float = DEFAULT_TIMEOUT_S, var: str = "DSH_TIMEOUT") -> float:
    """``DSH_TIMEOUT`` (or ``var``) in seconds (unset or blank: the default)."""
    if not raw or not raw.strip():
        return default
    value = _seconds(raw, 0.0)
    if not 0 < value <= MAX_SECONDS:
        raise UserError(f"{var} must be a positive number of seconds (at most {MAX_SECONDS:,.0f}), "
                        f"not {_shown(raw)}", code="BAD_CONFIG")
    return value
