"""What :func:`~.shell_parse.parse_line` returns: a line's simple commands, redirections, and
why it is unresolved (if it is)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .shell_wrappers import Word


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


__all__ = ["ParsedLine", "Redirect", "SimpleCommand", "Word"]
