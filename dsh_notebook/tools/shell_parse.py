"""A bash command line as the simple commands it runs — what approval rules and grants match.

:func:`parse_line` parses with tree-sitter's bash grammar (``tree-sitter`` + ``tree-sitter-bash``,
MIT) and walks the tree as an **allow-list**: a line is *resolved* only when every node is one of
a small known-safe set —

- simple commands whose words are literals: unquoted words, ``'raw'``, ``"…"`` without expansion,
  ``\\`` escapes, ``$'…'`` with plain escapes (:mod:`.shell_words` reads each word as bash does);
- pipelines (``|``, ``|&``, ``!``), lists (``&&`` ``||`` ``;`` ``&``, newlines), ``( … )`` and
  ``{ …; }`` groups, comments;
- redirections to literal paths (``<`` ``>`` ``>>`` ``&>`` ``>&N`` ``2>&1`` …), here-strings of a
  literal, and here-documents whose body bash does not expand (a quoted delimiter, or a body
  without ``$``, backquote or backslash).

Anything else sets :attr:`ParsedLine.unresolved` to a human reason ("parameter expansion in a
redirect"): any parameter, command, arithmetic or process expansion, any assignment, ``if`` /
``for`` / ``while`` / ``case`` / ``[[ ]]`` / ``(( ))``, function definitions, builtins that
evaluate or rebind (:mod:`.shell_resolve`), a command name that is not a literal, a glob or tilde
in command position, a parse error (tree-sitter ``ERROR`` / ``MISSING`` nodes), and any place
where tree-sitter's reading could differ from bash's (text between nodes other than blanks, a
word holding a shell metacharacter, a here-document that ends elsewhere for bash).

Each :class:`SimpleCommand` has ``literal`` (its words after quote removal; for ``time ls`` the
``ls`` the keyword times) and ``resolved`` — what it finally runs, through the wrappers of
:mod:`.shell_wrappers` (``env``, ``timeout``, ``nice``, ``xargs``, ``sudo`` …), with the program's
base name; ``bash -c 'STRING'`` adds the commands of STRING, ``find … -exec CMD ;`` the CMD.
Rules treat an unresolved line as a match for every ``deny`` / ``ask`` rule and never for
``allow``; no grant covers it or is offered for it (:mod:`.grants`, :mod:`.rules`).
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .shell_words import Unresolved, Word, one_word, split_words

MAX_PARSE = 65536  # characters; a longer line is unresolved
MAX_NESTING = 64  # nested groups / subshells / `bash -c` levels
_VARREDIR = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>&]")  # `{fd}>file` assigns a variable
_NETWORK = ("/dev/tcp/", "/dev/udp/")


@dataclass(frozen=True)
class SimpleCommand:
    literal: tuple[str, ...]  # the words after quote removal
    assignments: tuple[str, ...] = ()  # always empty now: an assignment leaves the line unresolved
    resolved: tuple[tuple[str, ...], ...] = ()  # what it runs (the main program, then nested ones)
    words: tuple[Word, ...] = ()
    depth: int = 0  # 0: the line itself; 1: inside its `bash -c 'STRING'`, …


@dataclass(frozen=True)
class Redirect:
    op: str  # `>`, `>>`, `<`, `>&`, `<<`, `<<<` …
    target: str  # the path, fd, here-document delimiter or here-string


@dataclass
class ParsedLine:
    commands: list[SimpleCommand] = field(default_factory=list)
    unresolved: str | None = None  # why the line is not fully known, else None
    writes: bool = False  # an output redirection to something other than /dev/null or an fd
    redirects: list[Redirect] = field(default_factory=list)

    def why(self, reason: str) -> None:
        if self.unresolved is None:
            self.unresolved = reason


_local = threading.local()


def _parser() -> Any:
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter  # here: loading the grammar costs a few ms of every CLI start
        import tree_sitter_bash

        parser = _local.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return parser


def _first_error(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


def parse_into(text: str, line: ParsedLine, depth: int) -> None:
    """Parse ``text`` and add its commands to ``line`` (``depth`` > 0: inside ``bash -c``)."""
    if len(text) > MAX_PARSE:
        line.why(f"too long to check ({len(text)} characters)")
        return
    if "\0" in text:
        line.why("a NUL character")
        return
    if _VARREDIR.search(text.replace("\\\n", "")):
        line.why("a redirection that assigns a file descriptor ({fd}>…)")
        return
    try:
        src = text.encode("utf-8")
    except UnicodeEncodeError:
        line.why("text that is not valid UTF-8")
        return
    tree = _parser().parse(src)
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        near = src[bad.start_byte : bad.start_byte + 20].decode("utf-8", "replace") if bad is not None else ""
        line.why(f"a parse error near {near!r}" if near.strip() else "a parse error")
        return
    from .shell_walk import Walk  # the walker imports this module's types

    try:
        Walk(src, line, depth).program(root)
    except Unresolved as exc:
        line.why(str(exc))


@functools.lru_cache(maxsize=512)
def parse_line(command: str) -> ParsedLine:
    """The simple commands of a bash command line (cached: rules ask for the same line often).
    The result is shared: do not mutate it."""
    line = ParsedLine()
    if not command.strip(" \t\n"):  # bash's blanks only: `\r` or U+00A0 would be a command
        return line
    parse_into(command, line, 0)
    if not line.commands and line.unresolved is None:
        line.why("no command found")
    return line


def literal_target(src: str) -> str:
    """A redirection target as one literal word (raises :class:`Unresolved`)."""
    word = one_word(src)
    if word.dynamic or word.glob:
        raise Unresolved("a pattern or `~` in a redirect")
    if word.text.startswith(_NETWORK):
        raise Unresolved("a network redirect (/dev/tcp, /dev/udp)")
    return word.text


__all__ = ["MAX_NESTING", "ParsedLine", "Redirect", "SimpleCommand", "Word", "literal_target",
           "parse_into", "parse_line", "split_words"]
