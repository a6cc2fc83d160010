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

Every pattern runs in linear time whatever the text (literal alternations, key shapes that
match or fail within a bounded distance, URL userinfo scanned by hand) — a 10 MB answer of
letters, digits, ``:`` and ``@`` costs ten times a 1 MB one (issue 21 finding 3; see
``tests/benchmarks/bench_redaction.py``). :class:`StreamRedactor` masks text that arrives in
pieces with the same result however it was cut, holding back at most a bounded window.
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

MIN_SECRET_LEN = 8
MASK = "***"

_NAME_PARTS = re.compile(r"[^A-Za-z0-9]+")
_SECRET_WORDS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE")
_SECRET_PARTS = frozenset({"PASS", "AUTH", "OAUTH", "COOKIE"})
_WS = "\t\n\f\r "  # the only characters a stream is cut after
_WS_RUN = re.compile(r"[\t\n\f\r ]")
# Key shapes, one pass each: every pattern starts at a fixed literal and matches or fails within a
# bounded distance, so Python's engine stays linear (RE2 is linear too but pays ~30 µs per match in
# its Python binding: a page of keys took seconds); the case-insensitive ones run only when their
# word occurs. URL userinfo, whose scheme run backtracked quadratically, is found by hand
# (:func:`_url_spans`). `\b` before gh_/AKIA is checked in the callback (a leading `\b` would cost
# the engine its fast literal scan).
_HEADED = (  # (word that must occur, lower-cased; pattern whose group 1 is kept)
    ("=", re.compile(r"([?&](?i:access_token|token|api[_-]?key|key|secret|password|auth|sig|signature)=)"
                     r"[^&#\s\"']{4,}")),
    ("bearer", re.compile(r"((?i:bearer)\s{1,16})[A-Za-z0-9_\-\.=+/]{8,}")),
    ("api", re.compile(r"((?i:api[_-]?key)[\"'=:\s]{1,16})[A-Za-z0-9_\-\.]{8,}")),
)
_BARE = (
    ("sk-", re.compile(r"sk-[A-Za-z0-9_\-]{8,}")),
    ("gh", re.compile(r"gh[pousr]_[A-Za-z0-9]{20,}")),
    ("AKIA", re.compile(r"AKIA[0-9A-Z]{16}(?![0-9A-Za-z_])")),
)
_WORD = re.compile(r"\w")
# a cut after whitespace is unsafe when a shape that spans whitespace may have begun before it
_OPEN_SHAPE = re.compile(r"(?i:bearer\s*|api[_-]?key[\"'=:\s]*)\Z")
_SCHEME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-"
_LETTER = re.compile(r"[A-Za-z]")
_USER = re.compile(r"[^/\s:@]*")
_PASSWORD = re.compile(r"[^/\s@]+")


def _headed_mask(m: re.Match[str]) -> str:
    return m.group(1) + MASK


def _bare_mask(m: re.Match[str]) -> str:
    start = m.start()
    if m.group()[0] in "gA" and start > 0 and _WORD.match(m.string, start - 1):
        return m.group()  # not at a word boundary: `xghp_…`, `XAKIA…`
    return MASK


def _mask_shapes(text: str) -> str:
    lower = text.lower()
    for word, pattern in _HEADED:
        if word in lower:
            text = pattern.sub(_headed_mask, text)
    for word, pattern in _BARE:
        if word in text:
            text = pattern.sub(_bare_mask, text)
    return text


def _url_spans(text: str) -> list[tuple[int, int]]:
    r"""The ``(start, end)`` of the password of every ``scheme://user:PASSWORD@`` in ``text``:
    what ``[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@`` finds, in one linear pass (each
    scheme run is read once: it cannot hold the ``:`` or ``/`` that ends the previous match)."""
    out: list[tuple[int, int]] = []
    i, floor = text.find("://"), 0
    while i >= 0:
        run_start = floor + len(text[floor:i].rstrip(_SCHEME_CHARS)) if i > floor else i
        has_letter = _LETTER.search(text, run_start, i) is not None
        next_i = text.find("://", i + 3)
        if has_letter:
            user = _USER.match(text, i + 3)
            colon = user.end() if user else i + 3
            if colon < len(text) and text[colon] == ":":
                pw = _PASSWORD.match(text, colon + 1)
                if pw and pw.end() < len(text) and text[pw.end()] == "@":
                    out.append((colon + 1, pw.end()))
                    floor = pw.end() + 1
                    i = text.find("://", floor)
                    continue
        floor = i + 3
        i = next_i
    return out


def _mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, last = [], 0
    for a, b in spans:
        parts += [text[last:a], MASK]
        last = b
    parts.append(text[last:])
    return "".join(parts)


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
    spans = _url_spans(value)
    return value[spans[0][0] : spans[0][1]] if spans else None


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
    longest: int = 0
    spaced: tuple[str, ...] = ()  # the values holding whitespace (a stream may not cut inside them)


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
        """Remember secret values (shorter than :data:`MIN_SECRET_LEN` ones are ignored)."""
        fresh = {v for v in values if v and len(v) >= MIN_SECRET_LEN}
        if not fresh or fresh <= self._snap.values:
            return
        with self._lock:
            merged = self._snap.values | fresh
            ordered = sorted(merged, key=len, reverse=True)  # longest first: no partial leftovers
            pattern = re.compile("|".join(re.escape(v) for v in ordered))  # literals: linear
            spaced = tuple(v for v in ordered if any(c in _WS for c in v))
            self._snap = _Snapshot(frozenset(merged), pattern, len(ordered[0]), spaced)

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
            text = _mask_spans(text, _url_spans(text))
        return _mask_shapes(text)


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
        return {redact_text(k): (_nested_arguments(v, redact_text) if k == "arguments" and isinstance(v, str)
                                 else _redact_json(v, redact_text)) for k, v in value.items()}
    return value


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
    still the same JSON shape (re-dumped only when something was masked). Text that is not JSON,
    or too deep to walk, is redacted as plain text."""
    redact_text = redact_known if known_only else redact
    if not text:
        return text
    if redact_text(text) == text:
        return text  # nothing to mask anywhere: keep the model's exact bytes
    try:
        data = json.loads(text)
        clean = _redact_json(data, redact_text)
        return json.dumps(clean, ensure_ascii=False)
    except (ValueError, RecursionError):
        return redact_text(text)


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


class StreamRedactor:
    """Masks secrets in text that arrives in pieces (model deltas), with the same result however
    the text was cut.

    The text is emitted up to a *safe cut*: a point right after whitespace where no secret can
    span (not after ``Bearer``/``api_key:``, not inside a known value that holds whitespace), each
    piece redacted whole. What follows the last safe cut — the word being written, at most
    :attr:`window` characters — waits for the next delta; :meth:`flush` releases it at the end of
    the block. Past :attr:`window` characters without a safe cut the text is cut at the window
    (a point fixed by the text itself), so memory stays bounded and the output deterministic.
    """

    window = 16384

    def __init__(self, redactor: Redactor = REDACTOR) -> None:
        self.redactor = redactor
        self.pending = ""
        self._checked = 0  # cut candidates before this index of `pending` are decided
        self._last = 0  # the latest cut point (safe or forced) in `pending`
        self._forced: list[int] = []  # forced cut points in `pending` (always split there)
        self._before = ""  # the end of the text already emitted (a cut's safety may look back)
        if redactor is REDACTOR:
            redactor.refresh_from_env()  # secrets known only by their variable's name, too

    @staticmethod
    def _safe(buf: str, p: int, spaced: tuple[str, ...], final: bool) -> bool | None:
        """Is a cut at ``p`` (``buf[p-1]`` is whitespace) safe? ``None``: not known yet."""
        if _OPEN_SHAPE.search(buf, max(0, p - 48), p):
            return False
        for v in spaced:
            if p + len(v) - 1 > len(buf) and not final:
                return None
            if buf.find(v, max(0, p - len(v)), p + len(v) - 1) >= 0:
                return False
        return True

    def _backward(self, buf: str) -> int:
        """The last safe cut of ``buf`` after ``_checked`` (0: none yet), read from the end — when
        less than a window follows the latest cut, no forced cut can fall in ``buf``."""
        spaced, k, undecided = self.redactor._snap.spaced, len(buf), None
        ctx, off = self._before + buf, len(self._before)
        while True:
            k = max(buf.rfind(c, self._checked, k) for c in _WS)
            if k < 0:
                break
            verdict = self._safe(ctx, off + k + 1, spaced, False)
            if verdict is None:
                undecided = k
            elif verdict:
                self._last = self._checked = k + 1
                return k + 1
        self._checked = undecided if undecided is not None else len(buf)
        return 0

    def _advance(self, buf: str, final: bool) -> int:
        """Decide the cut candidates of ``buf`` from ``_checked`` on; the index to emit up to."""
        if not final and len(buf) - self._last < self.window:
            return self._backward(buf)
        spaced, window = self.redactor._snap.spaced, self.window
        ctx, off = self._before + buf, len(self._before)
        emit_to, last, stopped = 0, self._last, False
        for m in _WS_RUN.finditer(buf, self._checked):
            p = m.end()
            while p > last + window:
                last += window
                self._forced.append(last)
                emit_to = last
            verdict = self._safe(ctx, off + p, spaced, final)
            if verdict is None:
                self._checked, stopped = m.start(), True
                break
            if verdict:
                last = emit_to = p
        if not stopped:
            self._checked = len(buf)
            while len(buf) >= last + window:
                last += window
                self._forced.append(last)
                emit_to = last
        self._last = last
        return len(buf) if final else emit_to

    def _emit(self, buf: str, upto: int) -> str:
        cuts = [c for c in self._forced if c < upto]
        pieces = [buf[a:b] for a, b in zip([0, *cuts], [*cuts, upto], strict=True)]
        self._forced = [c - upto for c in self._forced if c > upto]
        keep = 48 + max((len(v) for v in self.redactor._snap.spaced), default=0)
        self._before = (self._before + buf[:upto])[-keep:]
        self._checked, self._last = max(0, self._checked - upto), max(0, self._last - upto)
        return "".join(self.redactor.redact(piece) for piece in pieces)

    def feed(self, text: str) -> str:
        buf = self.pending + text
        upto = self._advance(buf, final=False)
        out = self._emit(buf, upto) if upto else ""
        self.pending = buf[upto:]
        return out

    def flush(self) -> str:
        buf = self.pending
        if not buf:
            out = ""
        elif not self._forced and len(buf) - self._last < self.window:
            out = self.redactor.redact(buf)  # no cut falls in it: what _emit would make of it, whole
        else:
            out = self._emit(buf, self._advance(buf, final=True))
        self.pending, self._checked, self._last, self._forced, self._before = "", 0, 0, [], ""
        return out
