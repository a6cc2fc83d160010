"""The shapes of keys that need no registry: where one starts, and whether its body looks random.

A shape is masked only when it is a key, not when it merely resembles one (issue 35 finding 3):

- a bare key (``sk-…``, ``ghp_…``, ``hf_…``, ``AIza…``, ``xoxb-…``, ``glpat-…``, ``sk_live_…``,
  ``AKIA…``) starts at a **word boundary** — not ``task-``, ``kiosk-``, ``risk-``, ``flask-`` —
  and its body **looks random** (:func:`keylike`): long enough, and switching between lower case,
  upper case and digits as random text does, not as ``learn-model-selection-2024`` does;
- a headed key (``Bearer …``, ``api_key=…``, ``?token=…``) has a key-like body too, so
  ``api_key=os.environ["X"]``, ``api_key=settings.key`` or ``Bearer $TOKEN`` stay as written;
- URL userinfo (``scheme://user:PASSWORD@``) is a password whatever it looks like.

Every pattern starts at a fixed literal and matches or fails within a bounded distance, and the
body test reads the match once, so masking stays linear in the text (issue 21 finding 3; Python's
engine keeps its fast literal scan: boundaries are checked in the callback, not by a lookbehind).
URL userinfo, whose scheme run backtracked quadratically as a regex, is found by hand."""

from __future__ import annotations

import re
from collections.abc import Callable

MASK = "***"

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_RUNS = re.compile(r"[a-z]+|[A-Z]+|[0-9]+")
_BOUNDARY = re.compile(r"[A-Za-z0-9_\-]")  # a character a bare key may not follow


def keylike(body: str, min_len: int = 16) -> bool:
    """Does ``body`` look like a random key? At least ``min_len`` letters and digits (separators
    ``-``/``_``/``.`` not counted), switching class (lower, upper, digit) at least
    ``max(3, n // 8)`` times — random base62 switches about every second character, hex about every
    second or third; words, paths and identifiers hardly ever (``argsleak0123456789abcdef``: twice)."""
    alnum = _NOT_ALNUM.sub("", body)
    n = len(alnum)
    if n < min_len:
        return False
    need = max(3, n // 8)
    runs = 0
    for _ in _RUNS.finditer(alnum):
        runs += 1
        if runs > need:
            return True
    return False


# (the literal that must occur, pattern: group 1 kept, group 2 the body, body test min length or 0)
_HEADED: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("=", re.compile(r"([?&](?i:password|passwd|secret)=)([^&#\s\"']{4,})"), 0),
    ("=", re.compile(r"([?&](?i:access_token|token|api[_-]?key|key|auth|sig|signature)=)([^&#\s\"']{4,})"), 8),
    ("bearer", re.compile(r"((?i:bearer)\s{1,16})([A-Za-z0-9_\-\.=+/]{8,})"), 16),
    ("api", re.compile(r"((?i:api[_-]?key)[\"'=:\s]{1,16})([A-Za-z0-9_\-\.]{8,})"), 16),
)
# bare keys: (literal, pattern: group 1 the prefix, group 2 the body, body test min length or 0)
_BARE: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("sk-", re.compile(r"(sk-)([A-Za-z0-9_\-]{8,})"), 20),
    ("k_", re.compile(r"([sr]k_(?:live|test)_)([A-Za-z0-9]{10,})"), 16),
    ("gh", re.compile(r"(gh[pousr]_)([A-Za-z0-9]{20,})"), 20),
    ("github_pat_", re.compile(r"(github_pat_)([A-Za-z0-9_]{22,})"), 20),
    ("hf_", re.compile(r"(hf_)([A-Za-z0-9]{20,})"), 20),
    ("glpat-", re.compile(r"(glpat-)([A-Za-z0-9_\-]{20,})"), 16),
    ("xox", re.compile(r"(xox[abposr]-)([A-Za-z0-9\-]{10,})"), 16),
    ("AIza", re.compile(r"(AIza)([0-9A-Za-z_\-]{35})"), 20),
    ("AKIA", re.compile(r"(AKIA)([0-9A-Z]{16})(?![0-9A-Za-z_])"), 0),  # AWS's own fixed form
)
# a cut after whitespace is unsafe when a shape that spans whitespace may have begun before it
OPEN_SHAPE = re.compile(r"(?i:bearer\s*|api[_-]?key[\"'=:\s]*)\Z")


def _headed(min_len: int) -> Callable[[re.Match[str]], str]:
    def mask(m: re.Match[str]) -> str:
        if min_len and not keylike(m.group(2), min_len):
            return m.group()
        return m.group(1) + MASK
    return mask


def _bare(min_len: int) -> Callable[[re.Match[str]], str]:
    def mask(m: re.Match[str]) -> str:
        start = m.start()
        if start > 0 and _BOUNDARY.match(m.string, start - 1):
            return m.group()  # not at a word boundary: `task-…`, `kiosk-…`, `flask-sqlalchemy`
        if min_len and not keylike(m.group(2), min_len):
            return m.group()  # not random: `sk-learn-model-selection`, `hf_hub_download`
        return MASK
    return mask


_HEADED_MASKS = tuple((word, pattern, _headed(n)) for word, pattern, n in _HEADED)
_BARE_MASKS = tuple((word, pattern, _bare(n)) for word, pattern, n in _BARE)


def mask_shapes(text: str) -> str:
    """``text`` with every key shape masked (headed ones keep their head: ``Bearer ***``)."""
    lower = text.lower()
    for word, pattern, mask in _HEADED_MASKS:
        if word in lower:
            text = pattern.sub(mask, text)
    for word, pattern, mask in _BARE_MASKS:
        if word in text:
            text = pattern.sub(mask, text)
    return text


_SCHEME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-"
_LETTER = re.compile(r"[A-Za-z]")
_USER = re.compile(r"[^/\s:@]*")
_PASSWORD = re.compile(r"[^/\s@]+")


def url_spans(text: str) -> list[tuple[int, int]]:
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


def mask_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, last = [], 0
    for a, b in spans:
        parts += [text[last:a], MASK]
        last = b
    parts.append(text[last:])
    return "".join(parts)


__all__ = ["MASK", "OPEN_SHAPE", "keylike", "mask_shapes", "mask_spans", "url_spans"]
