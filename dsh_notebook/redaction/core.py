"""The known secrets and the masking of whole texts.

Two sources of secrets:

- **by name**: every environment variable whose name looks like a credential (``*KEY*``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*PASS*``, ``*AUTH*``, ``*CREDENTIAL*`` …) and
  the password of every URL with userinfo (``postgres://user:pw@host``), read from
  ``os.environ`` by :meth:`Redactor.refresh_from_env`;
- **by value**: what :func:`register_secret` was given (the configured API key, a key sent in
  a header).

:func:`redact` replaces each known value (at least :data:`MIN_SECRET_LEN` characters, so short
values do not shred ordinary text), in every form it is written in (:mod:`.forms`), with ``***``,
then URL userinfo and the shapes of keys that need no registry (:mod:`.shapes`). The known forms
are one compiled alternation of literals held in an immutable snapshot: :func:`redact` reads one
attribute and never iterates a container another thread may be changing; registering builds a
new snapshot under a lock and swaps it in.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .forms import decoded_forms, encoded_forms, trie_pattern
from .shapes import keylike, mask_shapes, mask_spans, url_spans

MIN_SECRET_LEN = 8
MASK = "***"

_NAME_PARTS = re.compile(r"[^A-Za-z0-9]+")
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE")
_SECRET_PARTS = frozenset({"PASS", "AUTH", "OAUTH", "COOKIE"})
_PASSWORDISH = re.compile(r"(?i)pass|secret")
_WS = "\t\n\f\r "  # whitespace: where a stream may be cut (:mod:`.stream`)
@functools.lru_cache(maxsize=4096)  # read for every variable at every redact(): names repeat
def is_secret_name(name: str) -> bool:
    """True for an environment variable name that may hold a credential.

    ``OPENAI_API_KEY``, ``GITHUB_TOKEN``, ``client_secret``, ``DB_PASSWORD``, ``MY_PASS``,
    ``ANTHROPIC_AUTH``, ``AWS_SECRET_ACCESS_KEY``; not ``PATH``, ``PWD``, ``KEYBOARD_LAYOUT``
    or ``AUTHOR``.
    """
    upper = name.upper()
    if any(word in upper for word in _SECRET_WORDS):
        return True
    parts = [p for p in _NAME_PARTS.split(upper) if p]
    return upper.endswith("KEY_ID") or any(p in _SECRET_PARTS or p.endswith("KEY") for p in parts)


def url_password(value: str) -> str | None:
    """The password of a URL with userinfo (``scheme://user:pw@host``), else ``None``."""
    spans = url_spans(value)
    return value[spans[0][0] : spans[0][1]] if spans else None


def env_secrets(environ: Mapping[str, str]) -> set[str]:
    """The secret values of an environment: by variable name, and URL passwords in any value
    (as written and percent-decoded: ``p%40ss`` is also ``p@ss``)."""
    out: set[str] = set()
    for name, value in environ.items():
        if is_secret_name(name):
            out.add(value)
        if "://" in value:
            pw = url_password(value)
            if pw:
                out |= decoded_forms(pw)
    return out


@dataclass(frozen=True)
class _Snapshot:
    values: frozenset[str]
    pattern: re.Pattern[str] | None
    longest: int = 0
    spaced: tuple[str, ...] = ()  # the forms holding whitespace (a stream may not cut inside them)
    forms: frozenset[str] = frozenset()  # every value in every form it is written (:mod:`.forms`)


class Redactor:
    """The known secret values as one compiled pattern; safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap = _Snapshot(frozenset(), None)
        self._env_seen: frozenset[tuple[str, str]] = frozenset()
        self._env_raw: dict[bytes, bytes] | None = None  # os.environ's own data when last read

    @property
    def values(self) -> frozenset[str]:
        return self._snap.values

    def add(self, values: Iterable[str | None]) -> None:
        """Remember secret values (shorter than :data:`MIN_SECRET_LEN` ones are ignored), each
        in every form it may be written in (JSON-escaped, percent-encoded …: :mod:`.forms`)."""
        fresh = {v for v in values if v and len(v) >= MIN_SECRET_LEN}
        if not fresh or fresh <= self._snap.values:
            return
        with self._lock:
            snap = self._snap
            fresh -= snap.values
            forms = set(snap.forms)
            for value in fresh:
                forms |= {f for f in encoded_forms(value) if len(f) >= MIN_SECRET_LEN}
            ordered = sorted(forms, key=len, reverse=True)
            pattern = re.compile(trie_pattern(forms))  # literals as a trie, longest first: linear
            spaced = tuple(v for v in ordered if any(c in _WS for c in v))
            self._snap = _Snapshot(snap.values | fresh, pattern, len(ordered[0]), spaced, frozenset(forms))

    def refresh_from_env(self, environ: Mapping[str, str] | None = None) -> None:
        """Learn the secrets of ``environ`` (default ``os.environ``); cheap when nothing changed."""
        env = os.environ if environ is None else environ
        raw = getattr(os.environ, "_data", None) if environ is None else None  # CPython's undecoded copy
        if raw is not None:
            if raw == self._env_raw:
                return  # unchanged (a C-level dict compare: this runs several times a step)
            raw = dict(raw)  # taken before reading: a change meanwhile is seen by the next call
        for _ in range(3):  # another thread may set a variable while this one reads them
            try:
                items = frozenset((k, v) for k, v in list(env.items()) if is_secret_name(k) or "://" in v)
                break
            except RuntimeError:
                continue
        else:
            return
        if items != self._env_seen:
            self.add(env_secrets(dict(items)))
            self._env_seen = items
        if raw is not None:
            self._env_raw = raw

    def redact(self, text: str) -> str:
        """``text`` with every known secret value and every key-shaped string masked."""
        if not text:
            return text
        snap = self._snap  # one read: a concurrent add swaps the snapshot, never mutates it
        if snap.pattern is not None:
            text = snap.pattern.sub(MASK, text)
        if "://" in text:
            text = mask_spans(text, url_spans(text))
        return mask_shapes(text)


REDACTOR = Redactor()


def register_secret(value: str | None) -> None:
    """Remember a secret (an API key in use) so :func:`redact` removes it from any text."""
    REDACTOR.add((value,))


def redact(text: str) -> str:
    """Mask every secret this process knows (environment, registered keys, key shapes)."""
    REDACTOR.refresh_from_env()
    return REDACTOR.redact(text)


def redact_known(text: str) -> str:
    """:func:`redact` without re-reading the environment: for hot paths (stream chunks)."""
    return REDACTOR.redact(text)


def _redact_json(value: Any, redact_text: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_redact_json(v, redact_text) for v in value]
    if isinstance(value, dict):
        return {redact_text(k): _field(k, v, redact_text) for k, v in value.items()}
    if isinstance(value, int | float) and not isinstance(value, bool) and redact_text(str(value)) != str(value):
        return MASK  # a known secret written as a JSON number (a PIN)
    return value


def _field(key: Any, value: Any, redact_text: Any) -> Any:
    """The value of ``key`` masked: a tool call's ``arguments`` (JSON inside a JSON string) stay
    valid JSON; a string under a credential's name (``"api_key"``, ``"password"``) is masked when
    it looks like a key — a password's, secret's or passphrase's whatever it looks like."""
    if isinstance(value, str) and isinstance(key, str):
        if key == "arguments":
            return _nested_arguments(value, redact_text)
        if is_secret_name(key) and value and (keylike(value, 12) or (len(value) >= 4 and _PASSWORDISH.search(key))):
            return MASK
    return _redact_json(value, redact_text)


def _nested_arguments(text: str, redact_text: Any) -> str:
    """A tool call's ``arguments`` (JSON inside a JSON string) stay valid JSON."""
    try:
        return json.dumps(_redact_json(json.loads(text), redact_text), ensure_ascii=False)
    except (ValueError, RecursionError):
        return str(redact_text(text))


def redact_data(value: Any) -> Any:
    """A JSON-able value (an event, a list of messages) with secrets masked in every string —
    a tool call's ``arguments`` inside their own JSON. For showing logs written before the
    arguments were masked at the source."""
    try:
        return _redact_json(value, redact)
    except RecursionError:
        return value


def redact_json_text(text: str, *, known_only: bool = False) -> str:
    """Tool-call arguments (a JSON text) with secrets masked INSIDE its strings, so the result is
    still the same JSON shape (re-dumped only when something was masked; otherwise the model's
    exact bytes). The strings are read decoded, so a secret written with JSON escapes is found.
    Text that is not JSON, or too deep to walk, is redacted as plain text."""
    redact_text = redact_known if known_only else redact
    if not text:
        return text
    try:
        data = json.loads(text)
        clean = _redact_json(data, redact_text)
    except (ValueError, RecursionError):
        return redact_text(text)
    return text if clean == data else json.dumps(clean, ensure_ascii=False)


@contextmanager
def secrets_hidden(environ: MutableMapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """While the block runs, ``environ`` (default ``os.environ``) has no secret-named variable and
    no URL with a password; they are learnt by :data:`REDACTOR` first and restored after.

    For code that runs inside this process (the notebook's ``python`` tool): ``os.environ`` and
    the environment of what it starts no longer hold the keys. It cannot hide what the process
    holds elsewhere (``/proc/self/environ`` keeps the environment the process started with, the
    host's configured key lives in memory) — a guard against the casual read, not a sandbox."""
    env = os.environ if environ is None else environ
    REDACTOR.refresh_from_env(env)
    hidden: dict[str, str] = {}
    for name in list(env):
        value = env.get(name)
        if value is not None and (is_secret_name(name) or url_password(value)):
            hidden[name] = env.pop(name)
    try:
        yield hidden
    finally:
        env.update(hidden)


