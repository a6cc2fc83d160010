"""What an approval prompt shows: the WHOLE call, on one line, nothing hidden (issue 21 finding 6).

:func:`visible` collapses runs of spaces into one and writes every character a person could not
see as an escape: controls (``\\t``, ``\\n``, ``\\r``, ``\\x1b``, ``\\x9b`` …), format and
invisible characters (bidi overrides ``\\u202e``, zero-width ``\\u200b``, ``\\ufeff``, soft hyphen),
and every space other than the ASCII one (``\\u00a0``, ``\\u3000``). It never cuts: an approval
is given to exactly what it shows. :func:`approval_text` renders a call's arguments that way.
"""

from __future__ import annotations

import json
import re
import unicodedata

_SPACES = re.compile(r" {2,}")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` on one line with space runs collapsed and every invisible character escaped."""
    text = _SPACES.sub(" ", text)
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(c) if c != " " and unicodedata.category(c) in _HIDDEN_CATEGORIES else c
                   for c in text)


def approval_text(name: str, arguments: str) -> str:
    """The whole of a call for an approval prompt: the command (bash), the code (python), one
    value alone, else ``key=value, …`` — through :func:`visible`, never shortened."""
    try:
        data = json.loads(arguments) if arguments else {}
    except ValueError:
        data = None
    if isinstance(data, dict) and len(data) == 1:
        value = next(iter(data.values()))
        text = value if isinstance(value, str) else json.dumps(value)
    elif isinstance(data, dict):
        text = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in data.items())
    else:
        text = arguments
    return visible(text)


__all__ = ["approval_text", "visible"]
