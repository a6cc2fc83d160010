"""What a simple command runs: keywords, builtins that evaluate or rebind, wrappers, shells.

:func:`command_words` drops the ``time`` keyword (bash times the pipeline after it) and refuses a
reserved word where tree-sitter saw a command name. :func:`resolve` follows the wrappers of
:mod:`.shell_wrappers` to the program finally run (by base name), adds the commands of ``bash -c
'STRING'`` and ``find … -exec CMD ;``, and leaves the line unresolved for what it cannot see:

- builtins that evaluate text or rebind names (:data:`EVALUATING`): ``eval``, ``source``/``.``,
  ``hash``, ``read``, ``mapfile``/``readarray``, ``let``, ``declare``/``typeset``/``local``/
  ``export``/``readonly``, ``unset`` (array subscripts are arithmetic), ``trap``, ``enable``,
  ``alias``, ``builtin``, ``set``/``shopt`` (they change how the rest runs), ``fc``, ``getopts`` …;
- builtin options that do (:data:`EVALUATING_OPTIONS`): ``printf -v``, ``wait -p``,
  ``command -p``, ``test -v`` / ``[ -v`` / ``-R``;
- a glob, a ``~`` or a reserved word as the command name; a shell reading a script or stdin, one
  started with options that read start-up files or change its grammar, a shell other than
  bash/sh/dash (another grammar); a wrapper option not understood; a variable that makes a
  program run code (``BASH_ENV``, ``LD_PRELOAD`` …) given to ``env`` / ``sudo``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .shell_words import ASSIGNMENT, Unresolved
from .shell_wrappers import WRAPPERS, Word, skip_options

if TYPE_CHECKING:
    from .shell_line import ParsedLine

Nested = Callable[[str, "ParsedLine", int], None]  # parses a `bash -c` string into the line

MAX_DEPTH = 4  # nested `bash -c` / `find -exec`
EVALUATING = frozenset({
    "eval", "source", ".", "alias", "unalias", "trap", "enable", "builtin", "hash", "let", "mapfile",
    "readarray", "read", "declare", "typeset", "local", "export", "readonly", "unset", "getopts", "set",
    "shopt", "fc", "bind", "complete", "compgen", "compopt", "history", "caller", "coproc", "select",
    "function",
})  # fmt: skip
# builtin -> (short option letters that evaluate or rebind, whole words that do)
EVALUATING_OPTIONS: dict[str, tuple[str, frozenset[str]]] = {
    "printf": ("v", frozenset()), "wait": ("p", frozenset()), "command": ("p", frozenset()),
    "test": ("", frozenset({"-v", "-R"})), "[": ("", frozenset({"-v", "-R"})),
}
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do",
                      "done", "in", "{", "}", "!", "[[", "]]", "((", "))"})
BASH_LIKE = frozenset({"bash", "sh", "dash", "rbash"})
OTHER_SHELLS = frozenset({"zsh", "ksh", "ash", "mksh", "busybox", "fish", "csh", "tcsh", "yash", "pwsh"})
_SHELL_FLAGS = set("abcefhmnprtuvxBCEHPT")  # `-i`/`-l` read start-up files, `-O` changes the
_SHELL_LONG = frozenset({"--noprofile", "--norc", "--restricted", "--verbose", "--noediting"})  # grammar,
_CODE_VARS = frozenset({"BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PROMPT_COMMAND", "LD_LIBRARY_PATH"})  # `-k` …


def command_words(words: list[Word], raws: list[str], pipeline_start: bool) -> list[Word]:
    """The words of the command run: the ``time`` keyword (unquoted, first in a pipeline) and its
    unquoted ``-p`` / ``--`` dropped. ``raws``: the source text of the words (one per word, unless
    tree-sitter joined some)."""
    first_raw = raws[0].split()[0] if raws and raws[0].split() else ""
    if first_raw in RESERVED or first_raw in ("coproc", "select", "function"):
        raise Unresolved(f"`{first_raw}` where the parser saw a command")
    if first_raw != "time" or not pipeline_start:
        return words
    k = 1
    while k < len(words) and words[k].text.startswith("-"):
        if words[k].text not in ("-p", "--") or len(raws) != len(words) or raws[k] != words[k].text:
            raise Unresolved("an option of the `time` keyword the parser cannot follow")
        k += 1
    rest = words[k:]
    if rest and ASSIGNMENT.match(rest[0].text):
        raise Unresolved(f"an assignment ({rest[0].text[:30]})")
    if rest and rest[0].text in RESERVED | {"time", "coproc", "select", "function"}:
        raise Unresolved(f"`time {rest[0].text}` (a reserved word after the keyword)")
    return rest


def _leading_options(words: list[Word]) -> Iterable[str]:
    for w in words:
        if w.text == "--" or not w.text.startswith("-") or w.text == "-":
            return
        yield w.text


def _builtin_check(base: str, args: list[Word], line: ParsedLine) -> None:
    if base in EVALUATING:
        line.why(f"`{base}` (a builtin that evaluates text or rebinds names)")
        return
    spec = EVALUATING_OPTIONS.get(base)
    if spec is None:
        return
    letters, whole = spec
    if whole and any(a.text in whole for a in args):
        line.why(f"`{base} -v` (it evaluates an array subscript)")
    elif letters and any(set(o[1:]) & set(letters) for o in _leading_options(args) if not o.startswith("--")):
        line.why(f"`{base} -{letters}` (it rebinds a name or a search path)")


def _shell_string(words: list[Word], i: int) -> Word | None | bool:
    """For ``bash [opts] -c STRING``: the STRING word; ``False`` when no ``-c`` (a script/stdin),
    ``None`` when an option reads start-up files or changes the grammar."""
    has_c = False
    while i < len(words):
        t = words[i].text
        if t == "--" or t == "-":
            i += 1
            break
        if t.startswith("--"):
            if t not in _SHELL_LONG:
                return None
            i += 1
            continue
        if t[:1] in "-+" and len(t) > 1:
            if "s" in t[1:]:
                return False  # commands from stdin
            if not set(t[1:]) <= _SHELL_FLAGS | {"o"} or t[0] == "+" and "c" in t:
                return None
            has_c = has_c or "c" in t[1:]
            i += 2 if "o" in t[1:] else 1  # `-o option`
            continue
        break
    if not has_c:
        return False
    return words[i] if i < len(words) else None


def _runs_code(assignments: Iterable[str]) -> bool:
    return any(a.split("=", 1)[0] in _CODE_VARS for a in assignments if "=" in a)


def resolve(words: list[Word], line: ParsedLine, depth: int, nested: Nested) -> list[tuple[str, ...]]:
    """What ``words`` (a simple command) runs: the main program first, then nested commands
    (``nested`` parses a ``bash -c`` string into ``line``)."""
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(words):
        head = words[i]
        if head.glob or head.dynamic:
            line.why("a pattern or `~` in the command name")
            return out
        base = head.text.rsplit("/", 1)[-1]
        _builtin_check(base, words[i + 1 :], line)
        if base in OTHER_SHELLS:
            line.why(f"`{base}` (a shell whose grammar the parser does not model)")
        elif base in BASH_LIKE:
            inner = _shell_string(words, i + 1)
            if inner is False:
                line.why(f"`{base}` reads a script or stdin")
            elif not isinstance(inner, Word):
                line.why(f"`{base}` with options that read start-up files or change its grammar")
            elif inner.dynamic or depth >= MAX_DEPTH:
                line.why(f"`{base} -c` with a string the parser cannot see")
            else:
                nested(inner.text, line, depth + 1)
        if base == "find":
            _find_exec(words[i + 1 :], line, depth, out, nested)
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


def _find_exec(args: list[Word], line: ParsedLine, depth: int, out: list[tuple[str, ...]], nested: Nested) -> None:
    if depth >= MAX_DEPTH and any(a.text.startswith(("-exec", "-ok")) for a in args):
        line.why("`find -exec` nested too deep to follow")
        return
    k = 0
    while k < len(args):
        if args[k].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = k + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            inner = args[k + 1 : end]
            if not inner or "{}" in inner[0].text:
                line.why("`find -exec {}` runs the files it finds")
                return
            inner = [w for w in inner if w.text != "{}"]
            out.extend(resolve(inner, line, depth + 1, nested))
            k = end
        k += 1


__all__ = ["BASH_LIKE", "EVALUATING", "EVALUATING_OPTIONS", "MAX_DEPTH", "command_words", "resolve"]
