"""The wrappers a bash command runs through (``env``, ``xargs``, ``sudo`` …) and their options:
how far to skip to reach the program they run (:func:`skip_options`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Word:
    """One word of a command as bash reads it (:func:`.shell_words.split_words`)."""

    text: str  # after quote removal
    dynamic: bool = False  # starts with an unquoted `~` (bash puts $HOME there)
    glob: bool = False  # holds an unquoted `*`, `?` or `[…]`



_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class _Opts:
    """A wrapper's options: short flags, short options with an argument, long ones (GNU-style
    unique prefixes accepted), positional words before the command, ``NAME=VALUE`` words."""

    flags: str = ""
    args: str = ""
    long_flags: frozenset[str] = frozenset()
    long_args: frozenset[str] = frozenset()
    positionals: int = 0
    assignments: bool = False
    numeric: bool = False  # `nice -5`
    stop: frozenset[str] = frozenset()  # options this module cannot follow (`env -S`)


def _lf(*names: str) -> frozenset[str]:
    return frozenset(names)


WRAPPERS: dict[str, _Opts] = {
    "command": _Opts(flags="pvV"),
    "builtin": _Opts(),
    "exec": _Opts(flags="cl", args="a"),
    "nohup": _Opts(),
    "setsid": _Opts(flags="cfw", long_flags=_lf("ctty", "fork", "wait")),
    "env": _Opts(flags="i0v", args="uC", long_flags=_lf("ignore-environment", "null", "debug"),
                 long_args=_lf("unset", "chdir"), assignments=True, stop=frozenset("S") | _lf("split-string")),
    "xargs": _Opts(flags="0oprtxeil", args="adEILnPs",
                   long_flags=_lf("null", "interactive", "open-tty", "no-run-if-empty", "verbose", "exit",
                                  "eof", "replace", "max-lines"),
                   long_args=_lf("arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var")),
    "timeout": _Opts(flags="v", args="ks", long_flags=_lf("preserve-status", "foreground", "verbose"),
                     long_args=_lf("kill-after", "signal"), positionals=1),
    "nice": _Opts(args="n", long_args=_lf("adjustment"), numeric=True),
    "stdbuf": _Opts(args="ioe", long_args=_lf("input", "output", "error")),
    "ionice": _Opts(flags="t", args="cnpPu", long_flags=_lf("ignore"), long_args=_lf("class", "classdata")),
    "time": _Opts(flags="apqv", args="fo", long_flags=_lf("append", "portability", "verbose", "quiet"),
                  long_args=_lf("format", "output")),
    "sudo": _Opts(flags="AbEeHiKklnPSsVvBN", args="ugCDhprtTU", assignments=True,
                  long_flags=_lf("askpass", "background", "preserve-env", "edit", "set-home", "login",
                                 "remove-timestamp", "reset-timestamp", "non-interactive", "stdin", "shell"),
                  long_args=_lf("user", "group", "close-from", "chdir", "host", "prompt", "role", "type",
                                "command-timeout", "other-user")),
    "doas": _Opts(flags="nsL", args="uC"),
}


def _long(name: str, known: frozenset[str]) -> str | None:
    if name in known:
        return name
    hits = [k for k in known if k.startswith(name)]
    return hits[0] if len(hits) == 1 else None


def skip_options(spec: _Opts, words: list[Word], i: int) -> int | None:
    """The index of the wrapped command's name, or ``None`` when an option is not understood."""
    while i < len(words):
        w = words[i]
        if w.dynamic:
            return None
        t = w.text
        if t == "--":
            i += 1
            break
        if t.startswith("--") and len(t) > 2:
            name, eq, _ = t[2:].partition("=")
            full = _long(name, spec.long_flags | spec.long_args | spec.stop)
            if full is None or full in spec.stop:
                return None
            i += 2 if full in spec.long_args and not eq else 1
            continue
        if t.startswith("-") and len(t) > 1:
            if spec.numeric and t[1:].lstrip("-").isdigit():
                i += 1
                continue
            j, skip = 1, 1
            while j < len(t):
                c = t[j]
                if c in spec.stop:
                    return None
                if c in spec.args:
                    skip = 1 if j + 1 < len(t) else 2
                    break
                if c not in spec.flags:
                    return None
                j += 1
            i += skip
            continue
        if spec.assignments and "=" in t and _NAME.match(t.split("=", 1)[0]):
            i += 1
            continue
        break
    return i + spec.positionals


__all__ = ["WRAPPERS", "skip_options"]
