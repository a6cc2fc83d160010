"""The keys a git configuration file sets, read by git's own rules (without running git).

:func:`config_keys` follows git's syntax (``config.c``): ``[section]``, ``[section "sub"]`` and
``[section.sub]`` headers (a key may follow on the header's line), ``name = value`` or a bare
``name`` (true), values with quotes, escapes and backslash-newline continuations, ``#`` / ``;``
comments. It returns ``section[.subsection].name`` lower-cased (the subsection as written), or
``None`` when the text is not something it reads with certainty — a caller then assumes the worst.
"""

from __future__ import annotations

_SPACE = " \t\v\f\r"


def _header(text: str, i: int) -> tuple[str, int] | None:
    """Parse ``[…]`` at ``text[i]``; (``section[.sub]``, index after ``]``)."""
    j = i + 1
    name = []
    while j < len(text) and (text[j].isalnum() or text[j] in "-."):
        name.append(text[j].lower())
        j += 1
    section = "".join(name)
    if not section or not section[0].isalnum():
        return None
    if j < len(text) and text[j] == "]":
        return section, j + 1
    if j >= len(text) or text[j] not in " \t" or "." in section:
        return None
    while j < len(text) and text[j] in " \t":
        j += 1
    if j >= len(text) or text[j] != '"':
        return None
    j += 1
    sub = []
    while j < len(text) and text[j] != '"':
        if text[j] == "\n":
            return None
        if text[j] == "\\":
            j += 1
            if j >= len(text) or text[j] == "\n":
                return None
        sub.append(text[j])
        j += 1
    if text[j + 1 : j + 2] != "]":
        return None
    return f"{section}.{''.join(sub)}", j + 2


def _value(text: str, i: int) -> int | None:
    """Skip a value starting at ``text[i]``; the index of the newline that ends it (or the end)."""
    quoted = False
    while i < len(text):
        c = text[i]
        if c == "\n":
            return None if quoted else i
        if c == "\\":
            if i + 1 >= len(text) or text[i + 1] not in '\n"\\ntb':
                return None
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c in "#;" and not quoted:
            end = text.find("\n", i)
            return len(text) if end < 0 else end
        i += 1
    return None if quoted else i


def config_keys(text: str) -> list[str] | None:
    """Every key ``text`` sets, in order (see the module); None when it cannot be read surely."""
    keys: list[str] = []
    section: str | None = None
    i = 1 if text.startswith("\ufeff") else 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in _SPACE or c == "\n":
            i += 1
        elif c in "#;":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "[":
            head = _header(text, i)
            if head is None:
                return None
            section, i = head
        elif c.isalpha():
            j = i
            while j < n and (text[j].isalnum() or text[j] == "-"):
                j += 1
            if section is None:
                return None
            keys.append(f"{section}.{text[i:j].lower()}")
            while j < n and text[j] in _SPACE:
                j += 1
            if j < n and text[j] == "=":
                value_end = _value(text, j + 1)
                if value_end is None:
                    return None
                i = value_end
            elif j >= n or text[j] == "\n":
                i = j
            else:
                return None
        else:
            return None
    return keys


__all__ = ["config_keys"]
