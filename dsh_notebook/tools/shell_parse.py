"""A bash command line as the simple commands it runs — what approval rules and grants match.

:func:`parse_line` parses with ``bashlex`` (a maintained pure-Python port of bash's own grammar)
and walks every simple command of the line: pipelines, lists (``&&`` ``||`` ``;`` ``&``, newlines),
subshells, groups, ``if``/``for``/``while`` bodies. Each :class:`SimpleCommand` has

- ``literal`` — its words after quote removal (``t''ouch`` → ``touch``, ``\\touch`` → ``touch``),
  leading ``VAR=1`` assignments apart in ``assignments``;
- ``resolved`` — what it finally runs: through the wrappers ``command``, ``builtin``, ``exec``,
  ``env [-i] [-u N] [VAR=..]``, ``xargs``, ``timeout``, ``nice``, ``nohup``, ``stdbuf``, ``sudo``,
  ``doas``, ``setsid``, ``time``, ``ionice``, with the program's base name (``/usr/bin/touch`` →
  ``touch``); ``bash -c 'STRING'`` and ``find … -exec CMD ;`` add the commands they run.

What cannot be resolved from the text alone sets :attr:`ParsedLine.unresolved` (a reason):
command or process substitution (checked on the raw text too, so a here-document or a parser gap
cannot hide one), ``eval``, ``source``/``.``, a shell reading a script or stdin, function
definitions, a variable, glob or brace in command position, a wrapper option this module does
not know, anything the parser rejects (``case``, ``[[ ]]``, ``time`` as a keyword …) and a line
longer than :data:`MAX_PARSE` characters or with more than :data:`MAX_SEPARATORS` ``; & |`` or :data:`MAX_LINES` lines.
Rules treat an unresolved line as a match for ``deny`` / ``ask`` and never for ``allow``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .shell_wrappers import WRAPPERS, Word, skip_options

MAX_DEPTH = 4  # nested `bash -c` / wrappers
MAX_PARSE = 16384  # characters; longer lines are unresolved (bashlex is pure Python: ~1.5 ms a
MAX_SEPARATORS = 256  # simple command in a list), as are lines with more `;&|` or more lines
MAX_LINES = 500  # bashlex is quadratic in the lines of a list: 1,000 take 0.2 s, 2,000 take 1.5 s
_SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
EVAL_LIKE = frozenset({"eval", "source", ".", "alias", "trap", "enable", "fc"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox", "fish", "rbash"})




@dataclass(frozen=True)
class SimpleCommand:
    literal: tuple[str, ...]  # the words after quote removal, assignments excluded
    assignments: tuple[str, ...] = ()
    resolved: tuple[tuple[str, ...], ...] = ()  # what it runs (the main program, then nested ones)
    words: tuple[Word, ...] = ()


@dataclass
class ParsedLine:
    commands: list[SimpleCommand] = field(default_factory=list)
    unresolved: str | None = None  # why the line is not fully known, else None
    writes: bool = False  # an output redirection to something other than /dev/null or an fd

    def why(self, reason: str) -> None:
        if self.unresolved is None:
            self.unresolved = reason


def unquote(src: str) -> Word:
    """Quote removal of one word's source text (``'…'``, ``"…"``, ``\\x``)."""
    out: list[str] = []
    dynamic = glob = False
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            if i + 1 < n and src[i + 1] != "\n":
                out.append(src[i + 1])
            i += 2
        elif c == "'":
            j = src.find("'", i + 1)
            j = n if j < 0 else j
            out.append(src[i + 1 : j])
            i = j + 1
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                if src[i] == "\\" and i + 1 < n and src[i + 1] in '$`"\\\n':
                    if src[i + 1] != "\n":
                        out.append(src[i + 1])
                    i += 2
                    continue
                dynamic = dynamic or src[i] in "$`"
                out.append(src[i])
                i += 1
            i += 1
        else:
            dynamic = dynamic or c in "$`"
            glob = glob or c in "*?[{"
            out.append(c)
            i += 1
    return Word("".join(out), dynamic, glob)


def _shell_string(words: list[Word], i: int) -> Word | None | bool:
    """For ``bash [opts] -c STRING``: the STRING word; ``False`` when no ``-c`` (a script/stdin)."""
    has_c = False
    while i < len(words):
        t = words[i].text
        if t == "--":
            i += 1
            break
        if t.startswith("-") and len(t) > 1 and not t.startswith("--"):
            has_c = has_c or "c" in t[1:]
            i += 1
            if "o" in t[1:] or "O" in t[1:]:
                i += 1  # `-o option`
            continue
        if t.startswith("--"):
            i += 1
            continue
        break
    if not has_c:
        return False
    return words[i] if i < len(words) else None


def _resolve(words: list[Word], line: ParsedLine, depth: int) -> list[tuple[str, ...]]:
    """What ``words`` (a simple command without assignments) runs: the main program first."""
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        head = words[i]
        if head.dynamic or head.glob:
            line.why("a variable or a pattern in command position")
            return out
        base = head.text.rsplit("/", 1)[-1]
        if base in EVAL_LIKE:
            line.why(f"`{base}` runs text the parser cannot see")
        if base in SHELLS:
            inner = _shell_string(words, i + 1)
            if inner is False or inner is None:
                line.why(f"`{base}` reads a script or stdin")
            elif isinstance(inner, Word):
                if inner.dynamic or depth >= MAX_DEPTH:
                    line.why(f"`{base} -c` with a string the parser cannot see")
                else:
                    _parse_into(inner.text, line, depth + 1)
        if base == "find":
            _find_exec(words[i + 1 :], line, depth, out)
        spec = WRAPPERS.get(base)
        if spec is None:
            out.insert(0, (base, *(w.text for w in words[i + 1 :])))
            return out
        nxt = skip_options(spec, words, i + 1)
        if nxt is None:
            line.why(f"an option of `{base}` the parser cannot follow")
            out.insert(0, (base, *(w.text for w in words[i + 1 :])))
            return out
        if spec.assignments and _runs_code(w.text for w in words[i + 1 : nxt]):
            line.why("a variable that makes a program run code (BASH_ENV, LD_PRELOAD …)")
        if nxt >= len(words):  # `env` alone, `nice` alone: the wrapper is the program
            out.insert(0, (base, *(w.text for w in words[i + 1 :])))
            return out
        i = nxt  # wrappers are followed in a loop (no depth limit to slip past)
    return out


_CODE_VARS = frozenset({"BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PROMPT_COMMAND"})


def _runs_code(assignments: Iterable[str]) -> bool:
    return any(a.split("=", 1)[0] in _CODE_VARS for a in assignments if "=" in a)


def _find_exec(args: list[Word], line: ParsedLine, depth: int, out: list[tuple[str, ...]]) -> None:
    if depth >= MAX_DEPTH and any(a.text.startswith(("-exec", "-ok")) for a in args):
        line.why("`find -exec` nested too deep to follow")
        return
    k = 0
    while k < len(args):
        if args[k].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            inner = [w for w in args[k + 1 : end] if w.text != "{}"] or [Word("{}")]
            out.extend(_resolve(inner, line, depth + 1))
            k = end
        k += 1


def _is_write(node: object) -> bool:
    kind = getattr(node, "type", "")
    if ">" not in kind:
        return False
    target = getattr(node, "output", None)
    if isinstance(target, int):
        return False
    return getattr(target, "word", None) != "/dev/null"


def _walk(node: object, src: str, line: ParsedLine, depth: int) -> None:
    kind = getattr(node, "kind", "")
    if kind in ("commandsubstitution", "processsubstitution"):
        line.why("command or process substitution")
    elif kind == "function":
        line.why("a function definition")
    elif kind == "redirect" and _is_write(node):
        line.writes = True
    if kind == "command":
        _simple(node, src, line, depth)
    for attr in ("parts", "list", "redirects"):
        for child in getattr(node, attr, None) or ():
            _walk(child, src, line, depth)
    for attr in ("command", "output"):
        child = getattr(node, attr, None)
        if child is not None and not isinstance(child, int | str):
            _walk(child, src, line, depth)


def _simple(node: object, src: str, line: ParsedLine, depth: int) -> None:
    assignments: list[str] = []
    words: list[Word] = []
    for part in getattr(node, "parts", ()):
        start, end = part.pos
        if part.kind == "assignment" and not words:
            assignments.append(unquote(src[start:end]).text)
        elif part.kind in ("word", "assignment"):
            words.append(unquote(src[start:end]))
    if _runs_code(assignments):
        line.why("a variable that makes a program run code (BASH_ENV, LD_PRELOAD …)")
    if not words:
        return
    resolved = _resolve(words, line, depth)
    line.commands.append(SimpleCommand(tuple(w.text for w in words), tuple(assignments), tuple(resolved),
                                       tuple(words)))


def _parse_into(text: str, line: ParsedLine, depth: int) -> None:
    if _SUBSTITUTION.search(text):  # already a match for deny/ask, never for allow: no need to
        line.why("command or process substitution")  # parse (bashlex is slow on nested ones)
        return
    if len(text) > MAX_PARSE or sum(map(text.count, ";&|")) > MAX_SEPARATORS or text.count("\n") > MAX_LINES:
        line.why(f"too long to check ({len(text)} characters)")
        return
    import bashlex  # type: ignore[import-untyped]  # here: its grammar tables cost 0.1 s of every CLI start

    try:
        trees = bashlex.parse(text)
    except Exception as exc:  # bashlex raises its own errors, NotImplementedError, RecursionError …
        line.why(f"the parser cannot read it ({type(exc).__name__})")
        return
    for tree in trees:
        _walk(tree, text, line, depth)


@functools.lru_cache(maxsize=512)
def parse_line(command: str) -> ParsedLine:
    """The simple commands of a bash command line (cached: rules ask for the same line often).
    The result is shared: do not mutate it."""
    line = ParsedLine()
    if not command.strip():
        return line
    _parse_into(command, line, 0)
    if not line.commands and line.unresolved is None and command.strip():
        line.why("no command found")
    return line


__all__ = ["ParsedLine", "SimpleCommand", "Word", "parse_line", "unquote"]
