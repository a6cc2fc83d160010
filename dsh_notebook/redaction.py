"""Secret redaction: the values of the secrets this process knows never reach a log or a request.

Two sources of secrets:

- **by name**: every environment variable whose name looks like a credential (``*KEY*``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*PASS*``, ``*AUTH*``, ``*CREDENTIAL*`` …) and
  the password of every URL with userinfo (``postgres://user:pw@host``), read from
  ``os.environ`` by :meth:`Redactor.refresh_from_env`;
- **by value**: what :func:`register_secret` was given (the configured API key, a key sent in
  a header).

:func:`redact` replaces each known value (at least :data:`MIN_SECRET_LEN` characters, so short
values do not shred ordinary text) with ``***``, then the shapes of keys that need no registry
(``sk-…``, ``Bearer …``, ``api_key=…``, URL userinfo, ``?token=…``). The known values are one
compiled alternation held in an immutable snapshot: :func:`redact` reads one attribute and never
iterates a container another thread may be changing; registering builds a new snapshot under a
lock and swaps it in.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MIN_SECRET_LEN = 8
MASK = "***"

_NAME_PARTS = re.compile(r"[^A-Za-z0-9]+")
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE")
_SECRET_PARTS = frozenset({"PASS", "AUTH", "OAUTH", "COOKIE"})
_URL_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]*:)(?P<pw>[^/\s@]+)(?=@)")
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&](?:access_token|token|api[_-]?key|key|secret|password|auth|sig|signature)=)"
    r"(?P<pw>[^&#\s\"']{4,})",
    re.IGNORECASE,
)
_KEY_SHAPES = (
    re.compile(r"sk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-\.=+/]{8,}"),
    re.compile(r"(?i)(api[_-]?key[\"'=:\s]+)[A-Za-z0-9_\-\.]{8,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
)


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
    match = _URL_USERINFO.search(value)
    return match.group("pw") if match else None


def env_secrets(environ: Mapping[str, str]) -> set[str]:
    """The secret values of an environment: by variable name, and URL passwords in any value."""
    out: set[str] = set()
    for name, value in environ.items():
        if is_secret_name(name):
            out.add(value)
            pw = url_password(value)
            if pw:
                out.add(pw)
        elif "://" in value:
            pw = url_password(value)
            if pw:
                out.add(pw)
    return out


@dataclass(frozen=True)
class _Snapshot:
    values: frozenset[str]
    pattern: re.Pattern[str] | None
    prefixes: frozenset[str] = frozenset()  # every proper prefix of a value (for streams)
    longest: int = 0


class Redactor:
    """The known secret values as one compiled pattern; safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap = _Snapshot(frozenset(), None)
        self._env_seen: frozenset[tuple[str, str]] = frozenset()

    @property
    def values(self) -> frozenset[str]:
        return self._snap.values

    def add(self, values: Iterable[str | None]) -> None:
        """Remember secret values (shorter than :data:`MIN_SECRET_LEN` ones are ignored)."""
        fresh = {v for v in values if v and len(v) >= MIN_SECRET_LEN}
        if not fresh or fresh <= self._snap.values:
            return
        with self._lock:
            merged = self._snap.values | fresh
            ordered = sorted(merged, key=len, reverse=True)  # longest first: no partial leftovers
            pattern = re.compile("|".join(re.escape(v) for v in ordered))
            prefixes = frozenset(v[:i] for v in merged for i in range(1, len(v)))
            self._snap = _Snapshot(frozenset(merged), pattern, prefixes, len(ordered[0]))

    def refresh_from_env(self, environ: Mapping[str, str] | None = None) -> None:
        """Learn the secrets of ``environ`` (default ``os.environ``); cheap when nothing changed."""
        env = os.environ if environ is None else environ
        for _ in range(3):  # another thread may set a variable while this one reads them
            try:
                items = frozenset((k, v) for k, v in list(env.items()) if is_secret_name(k) or "://" in v)
                break
            except RuntimeError:
                continue
        else:
            return
        if items == self._env_seen:
            return
        self.add(env_secrets(dict(items)))
        self._env_seen = items

    def redact(self, text: str) -> str:
        """``text`` with every known secret value and every key-shaped string masked."""
        if not text:
            return text
        snap = self._snap  # one read: a concurrent add swaps the snapshot, never mutates it
        if snap.pattern is not None:
            text = snap.pattern.sub(MASK, text)
        text = _URL_USERINFO.sub(lambda m: m.group("head") + MASK, text)
        text = _QUERY_SECRET.sub(lambda m: m.group("head") + MASK, text)
        for pattern in _KEY_SHAPES:
            text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
        return text


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


class StreamRedactor:
    """Masks known secrets in text that arrives in pieces (model deltas).

    A secret split across two deltas is caught by holding back the end of the text seen so far
    when — and only as far as — it is the beginning of a known secret: :meth:`feed` returns what
    is safe to show now, :meth:`flush` the rest at the end of the block. Ordinary text is never
    delayed.
    """

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        self.redactor = redactor
        self.pending = ""

    def feed(self, text: str) -> str:
        snap = self.redactor._snap
        if snap.pattern is None:
            return self.flush() + self.redactor.redact(text) if self.pending else self.redactor.redact(text)
        buf = self.redactor.redact(self.pending + text)  # complete secrets are masked here
        cut = len(buf)
        for k in range(min(snap.longest - 1, len(buf)), 0, -1):
            if buf[-k:] in snap.prefixes:  # the tail may be the start of a secret: wait
                cut = len(buf) - k
                break
        self.pending = buf[cut:]
        return buf[:cut]

    def flush(self) -> str:
        out, self.pending = self.pending, ""
        return self.redactor.redact(out)
