"""The words of a bash command, read the way bash reads them — or a reason why they cannot be.

:mod:`.shell_parse` lets tree-sitter find the *structure* of a line (commands, pipelines, lists,
redirections) and hands the source text of each word to :func:`split_words`, which is the
authority on what the word is: it performs bash's quote removal (``'…'``, ``"…"``, ``\\x``,
``$'…'``) and splits on unquoted blanks, and it raises :class:`Unresolved` for everything whose
value bash would compute rather than read: parameter, command, arithmetic and process expansion,
brace expansion, ``$"…"`` translation, tilde expansion other than a leading ``~`` / ``~/``, and
any unquoted shell metacharacter (``; & | ( ) < >``, a newline, a leading ``#``), which means
tree-sitter and bash would not cut the line the same way.
"""

from __future__ import annotations

import re

from .shell_wrappers import Word

_BLANK = " \t"
_META = ";&|()<>\n"
_DQ_ESCAPES = '$`"\\\n'
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
                "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")  # a word bash takes for `NAME=…`
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)")  # on the unquoted skeleton of a word: `{a,b}`, `{1..3}`


class Unresolved(Exception):
    """What bash would compute here instead of reading it; ``str(exc)`` is the reason."""


def _expansion(src: str, i: int) -> str:
    """The reason for a ``$`` at ``src[i]`` outside single quotes."""
    nxt = src[i + 1 : i + 3]
    if nxt.startswith("(("):
        return "arithmetic expansion"
    if nxt.startswith("("):
        return "command substitution"
    if nxt.startswith("["):
        return "arithmetic expansion"
    if nxt.startswith('"'):
        return 'locale translation ($"…")'
    return "parameter expansion"


def _ansi_c(src: str, i: int, out: list[str]) -> int:
    """Decode ``$'…'`` starting at ``src[i] == '$'``; the index after the closing quote."""
    i += 2
    n = len(src)
    while i < n:
        c = src[i]
        if c == "'":
            return i + 1
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = src[i + 1 : i + 2]
        if e in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[e])
            i += 2
        elif e == "x":
            digits = re.match(r"[0-9A-Fa-f]{1,2}", src[i + 2 : i + 4])
            if digits is None:
                raise Unresolved("an escape in $'…' the parser does not decode")
            value = int(digits.group(), 16)
            if value == 0 or value > 0x7F:
                raise Unresolved("a NUL or non-ASCII byte in $'…'")
            out.append(chr(value))
            i += 2 + len(digits.group())
        elif e.isdigit() and e in "01234567":
            digits = re.match(r"[0-7]{1,3}", src[i + 1 : i + 4])
            assert digits is not None
            value = int(digits.group(), 8)
            if value == 0 or value > 0x7F:
                raise Unresolved("a NUL or non-ASCII byte in $'…'")
            out.append(chr(value))
            i += 1 + len(digits.group())
        else:  # \u, \U (locale-dependent), \c (control), a lone backslash at the end …
            raise Unresolved("an escape in $'…' the parser does not decode")
    raise Unresolved("an unterminated $'…'")


class _Builder:
    """One word being built: its text, and its unquoted skeleton (quoted characters masked)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.skeleton: list[str] = []
        self.started = False
        self.tilde = False

    def add(self, text: str, quoted: bool) -> None:
        self.text.append(text)
        self.skeleton.append("\0" * len(text) if quoted else text)
        self.started = True

    def word(self) -> Word:
        skeleton = "".join(self.skeleton)
        if "{" in skeleton and _BRACE.search(skeleton) and "}" in skeleton[skeleton.index("{"):]:
            raise Unresolved("brace expansion")
        glob = "*" in skeleton or "?" in skeleton or "[" in skeleton and "]" in skeleton[skeleton.index("["):]
        return Word("".join(self.text), dynamic=self.tilde, glob=glob)

    def last_unquoted(self) -> str:
        return "".join(self.skeleton)[-1:]


def _double(src: str, i: int, b: _Builder) -> int:
    """A ``"…"`` starting at ``src[i]``; the index after its closing quote."""
    i += 1
    n = len(src)
    while i < n:
        c = src[i]
        if c == '"':
            b.add("", True)
            return i + 1
        if c == "\\" and i + 1 < n and src[i + 1] in _DQ_ESCAPES:
            if src[i + 1] != "\n":
                b.add(src[i + 1], True)
            i += 2
            continue
        if c in "$`":
            raise Unresolved(_expansion(src, i) if c == "$" else "command substitution")
        b.add(c, True)
        i += 1
    raise Unresolved("an unterminated double quote")


def split_words(src: str) -> list[Word]:
    """The words of ``src`` after bash's quote removal, split on unquoted blanks (see module)."""
    words: list[Word] = []
    b = _Builder()
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in _BLANK:
            if b.started:
                words.append(b.word())
                b = _Builder()
            i += 1
        elif c == "\\":
            if i + 1 >= n:
                raise Unresolved("a backslash at the end of a word")
            if src[i + 1] != "\n":  # a backslash-newline joins lines
                b.add(src[i + 1], True)
            i += 2
        elif c == "'":
            j = src.find("'", i + 1)
            if j < 0:
                raise Unresolved("an unterminated single quote")
            b.add(src[i + 1 : j], True)
            i = j + 1
        elif c == '"':
            i = _double(src, i, b)
        elif c == "$" and src[i + 1 : i + 2] == "'":
            out: list[str] = []
            i = _ansi_c(src, i, out)
            b.add("".join(out), True)
        elif c == "$":
            raise Unresolved(_expansion(src, i))
        elif c == "`":
            raise Unresolved("command substitution")
        elif c in _META:
            raise Unresolved(f"`{c!s}` where the parser saw a word (tree-sitter and bash may read it differently)")
        elif c == "#" and not b.started:
            raise Unresolved("a comment where the parser saw a word")
        elif c == "~" and (not b.started or b.last_unquoted() in ("=", ":")):
            if b.started or src[i + 1 : i + 2] not in ("", "/", " ", "\t"):
                raise Unresolved("tilde expansion")  # `~user`, `~+`, `a=~/x` …
            b.tilde = True  # `~` and `~/…`: $HOME
            b.add(c, False)
            i += 1
        else:
            b.add(c, False)
            i += 1
    if b.started:
        words.append(b.word())
    return words


def one_word(src: str) -> Word:
    """``src`` as exactly one word (a redirection target, a here-document delimiter)."""
    words = split_words(src)
    if len(words) != 1:
        raise Unresolved("a redirection target that is not one word")
    return words[0]


__all__ = ["ASSIGNMENT", "Unresolved", "Word", "one_word", "split_words"]
