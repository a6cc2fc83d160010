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
in command position, a parse error (tree-sitter ``ERROR`` / ``MISSING`` nodes), a line over
:data:`MAX_PARSE` characters, and any place where tree-sitter's reading could differ from bash's
(:mod:`.shell_source`: text between nodes other than blanks, a word that starts or ends where
bash's does not, a word holding a shell metacharacter, a here-document that ends elsewhere for
bash). A grammar is not bash: tests run every resolved shape through ``/bin/bash`` itself.

Modules: :mod:`.shell_line` (what is returned), :mod:`.shell_walk` (the tree-sitter parse and the
walk of statements), :mod:`.shell_source`, :mod:`.shell_redirect`, :mod:`.shell_heredoc`,
:mod:`.shell_words` (words as bash reads them), :mod:`.shell_resolve` (keywords, builtins,
wrappers, ``bash -c``), :mod:`.shell_wrappers`.

Each :class:`SimpleCommand` has ``literal`` (its words after quote removal; for ``time ls`` the
``ls`` the keyword times) and ``resolved`` — what it finally runs, through the wrappers of
:mod:`.shell_wrappers` (``env``, ``timeout``, ``nice``, ``xargs``, ``sudo`` …), with the program's
base name; ``bash -c 'STRING'`` adds the commands of STRING, ``find … -exec CMD ;`` the CMD.
Rules treat an unresolved line as a match for every ``deny`` / ``ask`` rule and never for
``allow``; no grant covers it or is offered for it (:mod:`.grants`, :mod:`.rules`).
"""

from __future__ import annotations

import functools

from .shell_line import ParsedLine, Redirect, SimpleCommand, Word
from .shell_walk import MAX_NESTING, MAX_PARSE, parse_into
from .shell_words import split_words


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


__all__ = ["MAX_NESTING", "MAX_PARSE", "ParsedLine", "Redirect", "SimpleCommand", "Word", "parse_into", "parse_line",
           "split_words"]
