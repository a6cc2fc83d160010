"""What tab completion offers on a ``%dsh`` line, from the command registry: the line's flags and
every subcommand at the start, a flag's values (its choices, model ids, session ids), a
subcommand's words (session ids, mode names, ``mcp`` actions) and its own flags.

:func:`offers` works on the words before the cursor and the word being typed; the notebook's
completers (:mod:`dsh_notebook.notebook.magic.complete`) find those in a cell and add ``{variables}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..providers import hosted
from .spec import Arg, Command, Flag
from .table import command, dsh_words, line_flags

MODEL_IDS = ("script:auto", *(f"{p.prefix}:{m}" for p in hosted() for m in p.suggested))

Sessions = Callable[[], Iterable[str]]


def first_words() -> list[str]:
    """What a line may start with: every ``%dsh`` subcommand's first word, once, in the registry's order."""
    return list(dict.fromkeys(words[0] for words in reversed(dsh_words())))


def _values(spec: Flag | Arg, sessions: Sessions) -> list[str]:
    if spec.choices:
        return list(spec.choices)
    if spec.values == "model":
        return list(MODEL_IDS)
    if spec.values == "session":
        return sorted(sessions())
    return []


def offers(before: list[str], word: str, sessions: Sessions = lambda: ()) -> list[str] | None:
    """The completions of ``word`` after the words ``before`` (the line without ``%dsh``), or
    ``None`` when the line is prompt text (nothing to offer but ``{variables}``)."""
    flags = {f.name: f for f in line_flags()}
    i = 0
    while i < len(before):  # the leading flags and their values
        name, eq, _ = before[i].partition("=")
        spec = flags.get(name)
        if spec is None:
            break
        i += 1 if (eq or not spec.takes_value) else 2
    if i > len(before):  # the word is the value of the last flag
        return sorted(_matching(_values(flags[before[-1]], sessions), word))
    if i == len(before):  # still in the leading flags
        options = [f.name for f in flags.values()]
        return _matching(options if word.startswith("-") else [*first_words(), *options], word)
    rest = before[i:]
    named = next((w for w in dsh_words() if tuple(rest[: len(w)]) == w), None)
    if named is None:
        return None
    return _subcommand(command(" ".join(named)), rest[len(named):], word, sessions)


def _subcommand(cmd: Command, after: list[str], word: str, sessions: Sessions) -> list[str]:
    own = {f.name: f for f in cmd.flags_on("dsh")}
    if after and (flag := own.get(after[-1])) is not None and flag.takes_value:
        return sorted(_matching(_values(flag, sessions), word))
    if word.startswith("-"):
        return _matching([*own, "--help"], word)
    words = [w for k, w in enumerate(after)
             if not w.startswith("-") and not (k > 0 and (f := own.get(after[k - 1])) is not None and f.takes_value)]
    found: list[str] = []
    if not words:  # `policy ` offers `check` too (the longer command)
        size = len(cmd.words)
        found += [w[size] for w in dsh_words() if w[:size] == cmd.words and len(w) > size]
    slots = cmd.args_on("dsh")
    if len(words) < len(slots):
        found += _values(slots[len(words)], sessions)
    return _matching(found, word)


def _matching(candidates: Iterable[str], word: str) -> list[str]:
    return [c for c in dict.fromkeys(candidates) if c.startswith(word)]
