"""The forms a known secret takes in text: as typed, and as programs write it (issue 35 finding 9).

A password holding a quote, a backslash or a non-ASCII letter, read from a JSON config file,
reaches a tool result as ``pa\\"ss\\\\w\\u00f6rd``, not as itself; in a URL as ``pa%22ss%5Cw%C3%B6rd``.
:func:`encoded_forms` lists every form worth looking for, each a literal (the pattern stays one
alternation of literals: linear):

- the value, NFC and NFD (a letter with an accent typed either way);
- JSON-escaped as Python writes it (``ensure_ascii`` true and false, ``\\u`` in lower and upper
  case hex), with ``/`` as ``\\/`` (PHP), with ``<>&`` as ``\\u003c`` (Go), and JSON inside JSON
  (a tool call's arguments inside a log line);
- percent-encoded: every byte but the unreserved (``quote(safe="")``), with ``/`` kept, with
  ``+`` for a space (HTML forms), JavaScript's ``encodeURIComponent``, and lower-case hex;
- HTML-escaped (``&quot;``, ``&amp;``, ``&#x27;``).

Base64 is not listed: its text depends on where the value starts in the encoded bytes."""

from __future__ import annotations

import html
import json
import re
import unicodedata
from urllib.parse import quote, quote_plus, unquote

_HEX_ESCAPE = re.compile(r"\\u([0-9a-f]{4})")
_PERCENT = re.compile(r"%[0-9A-F]{2}")
_PLAIN = re.compile(r"[A-Za-z0-9._~-]*")
_GO = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def _json_forms(value: str) -> set[str]:
    once = {json.dumps(value, ensure_ascii=a)[1:-1] for a in (False, True)}
    out = set(once)
    for text in once:
        out.add(text.replace("/", "\\/"))
        out |= {json.dumps(text, ensure_ascii=a)[1:-1] for a in (False, True)}  # JSON inside JSON
        out.add(_HEX_ESCAPE.sub(lambda m: "\\u" + m.group(1).upper(), text))
    if any(c in value for c in _GO):
        out.add("".join(_GO.get(c, c) for c in json.dumps(value, ensure_ascii=False)[1:-1]))
    return out


def _url_forms(value: str) -> set[str]:
    out = {quote(value, safe=""), quote(value, safe="/"), quote_plus(value, safe=""),
           quote(value, safe="!'()*~")}  # the last: JavaScript's encodeURIComponent
    out |= {_PERCENT.sub(lambda m: m.group().lower(), text) for text in list(out)}
    return out


def encoded_forms(value: str) -> set[str]:
    """Every form of ``value`` to mask (``value`` itself included)."""
    out = {value}
    for typed in {value, unicodedata.normalize("NFC", value), unicodedata.normalize("NFD", value)}:
        out.add(typed)
        if _PLAIN.fullmatch(typed):
            continue  # every encoding of letters, digits and -._~ is the value itself
        out |= _json_forms(typed) | _url_forms(typed)
        out.add(html.escape(typed))
    return out


def trie_pattern(literals: set[str] | frozenset[str]) -> str:
    """One regex matching any of ``literals``, the longest where several start at one place,
    shaped as a trie (``P(?:a(?:ss…|%22…)|…)|a-reg…``): the engine tries one branch per distinct
    next character, not every literal at every position — a text that shares a first letter with
    many forms stays as fast as with one (the patterns are literal: still linear)."""
    trie: dict[str, dict] = {}  # type: ignore[type-arg]
    for word in literals:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # a literal ends here
    return _emit(trie)


def _emit(node: dict) -> str:  # type: ignore[type-arg]
    """The regex of a trie node: a run of single-child nodes is one literal (no recursion per
    character: a form may be a long private key); recursion only where literals part."""
    ends = "" in node
    branches = []
    for ch, child in sorted(node.items()):
        if not ch:
            continue
        run = [ch]
        while len(child) == 1 and "" not in child:
            (nxt, child), = child.items()
            run.append(nxt)
        branches.append(re.escape("".join(run)) + _emit(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ends else body  # a literal ends here; longer ones go on: longer first (greedy)


def decoded_forms(value: str) -> set[str]:
    """A secret read from a URL (a password in userinfo) as written and percent-decoded."""
    return {value, unquote(value)} if "%" in value else {value}


__all__ = ["decoded_forms", "encoded_forms", "trie_pattern"]
