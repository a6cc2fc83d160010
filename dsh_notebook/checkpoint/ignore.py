"""What a checkpoint covers: ``.git`` skipped (but its ``config`` and ``hooks``, see :mod:`.scan`),
``.gitignore`` files and ``DSH_CHECKPOINT_IGNORE`` honoured as git does them, size caps per file
and per workspace (``DSH_CHECKPOINT_MAX_FILE``, ``DSH_CHECKPOINT_MAX_TOTAL``).

``.gitignore`` syntax (git's, checked against ``git ls-files`` on real trees): a ``.gitignore``
in any folder applies to the paths below it, a deeper one before a shallower one, and within a file
the last matching line wins; blank lines and ``#`` comments (``\\#`` a literal ``#``), trailing
spaces dropped unless escaped; ``!pattern`` re-includes (not below an ignored folder: an ignored
folder is not walked); ``dir/`` matches folders only; a pattern with a ``/`` at its start or middle
is anchored at its ``.gitignore``'s folder (``/build``), else it matches a name at any depth;
``*`` ``?`` ``[a-z]`` ``[!a-z]`` never match ``/``; ``**/x``, ``x/**``, ``a/**/b`` span folders.
``DSH_CHECKPOINT_IGNORE`` is a comma-separated list of the same patterns, read as git reads
``.git/info/exclude`` (anchored at the workspace, under every ``.gitignore``).

**Linear time** (issue 35 finding 5: ``*a*a*a*a*a*a*a*a*b`` against a 200-character name froze
the kernel in a backtracking regex that held the GIL). A glob is still one regex — all the rules
of a folder are one alternation, matched in C — but one that cannot backtrack into a star: within
a name, the pieces between stars have a fixed length, so matching each at its *earliest* place is
exact, and each is written as an atomic group (a lookahead that captures, then a backreference:
Python's lookaheads never backtrack, on 3.10 as on 3.11) — only the last piece's star may give
characters back, one at a time. ``a/**/b/**/c``: the blocks between ``**`` are placed the same
way (earliest, atomically), the last one where it must end. A match costs O(path × pattern).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import UserError

MB = 1024 * 1024
DEFAULT_MAX_FILE = 10 * MB
DEFAULT_MAX_TOTAL = 500 * MB
ALWAYS_SKIPPED = frozenset({".git"})
GITIGNORE = ".gitignore"
_NAMES = itertools.count()  # atomic groups' names, unique across every combined regex


@dataclass(frozen=True)
class Rule:
    """One pattern line, as a regex over the workspace-relative path (its folder's prefix included)."""

    regex: str
    negated: bool
    dir_only: bool


def _atomic(rx: str) -> str:
    """``rx`` matched once, at its first success, never re-entered by backtracking."""
    name = f"a{next(_NAMES)}"
    return f"(?=(?P<{name}>{rx}))(?P={name})"


def _pieces(text: str) -> list[list[str]]:
    """A name's glob as its pieces between stars, each a list of one-character regexes (a star
    never matches ``/``; runs of stars are one star)."""
    pieces: list[list[str]] = [[]]
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            pieces[-1].append(re.escape(text[i + 1]))
            i += 2
            continue
        if c == "*":
            while i + 1 < n and text[i + 1] == "*":
                i += 1
            pieces.append([])
        elif c == "?":
            pieces[-1].append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and text[j] in "!^":
                j += 1
            if j < n and text[j] == "]":
                j += 1
            while j < n and text[j] != "]":
                j += 1
            if j >= n:
                pieces[-1].append(re.escape(c))
            else:
                body = text[i + 1:j]
                neg = body[:1] in ("!", "^")
                body = body[1:] if neg else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                pieces[-1].append(f"[^/{body}]" if neg else f"(?!/)[{body}]")
                i = j
        else:
            pieces[-1].append(re.escape(c))
        i += 1
    return pieces


def _glob(text: str) -> str:
    """A wildmatch glob of one name (no ``**`` here) as a regex that matches in linear time: the
    middle pieces atomically at their earliest place, the last one's star alone backtracking."""
    first, *rest = ["".join(p) for p in _pieces(text)]
    if not rest:
        return first
    *middle, last = rest
    return first + "".join(_atomic(f"[^/]*?{p}") for p in middle) + f"[^/]*{last}"


def _path_glob(parts: list[str]) -> str:
    """The regex of a pattern's ``/``-separated parts, ``**`` spanning folders: a block of names
    between two ``**`` is placed at its earliest folder, atomically (exact: the blocks have a fixed
    number of names); the last block must end the path, so only its ``**/`` backtracks."""
    out: list[str] = []
    k, n = 0, len(parts)
    while k < n:
        if parts[k] != "**":
            out.append(_glob(parts[k]) + ("" if k == n - 1 else "/"))
            k += 1
            continue
        while k + 1 < n and parts[k + 1] == "**":
            k += 1  # a/**/**/b is a/**/b
        if k == n - 1:  # "x/**": everything inside x (not x); "**" alone: everything
            out.append(".+" if out else ".*")
            break
        end = k + 1
        while end < n and parts[end] != "**":
            end += 1
        block = "/".join(_glob(p) for p in parts[k + 1:end])
        if end < n:  # another ** follows: earliest place, atomically
            out.append(_atomic(f"(?:[^/]*/)*?{block}/"))
        else:  # the last block: it must end the path
            out.append(f"(?:.*/)?{block}")
        k = end
    return "".join(out)


def compile_rule(raw: str, base: str = "") -> Rule | None:
    """One ``.gitignore`` line of the folder ``base`` (workspace-relative, ``""`` the root)."""
    line = raw.rstrip("\n").rstrip("\r")
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    rx = _path_glob(line.lstrip("/").split("/"))
    prefix = re.escape(base + "/") if base else ""
    if not anchored:
        prefix += "(?:.*/)?"
    return Rule(prefix + rx, negated, dir_only)


@dataclass(frozen=True)
class Rules:
    """The rules that apply in one folder (lowest priority first) with combined regexes, so an
    entry no rule matches (the usual case) costs one regex match."""

    rules: tuple[Rule, ...] = ()
    any_dir: re.Pattern[str] | None = None
    any_file: re.Pattern[str] | None = None
    negations: bool = False
    compiled: tuple[re.Pattern[str], ...] = ()

    @classmethod
    def of(cls, rules: tuple[Rule, ...]) -> Rules:
        if not rules:
            return EMPTY
        key = rules
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
        files = [r.regex for r in rules if not r.dir_only]
        out = cls(rules, re.compile("(?:" + "|".join(f"(?:{r.regex})" for r in rules) + r")\Z"),
                  re.compile("(?:" + "|".join(f"(?:{x})" for x in files) + r")\Z") if files else None,
                  any(r.negated for r in rules), tuple(re.compile(r.regex + r"\Z") for r in rules))
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = out
        return out

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the workspace-relative ``rel`` is ignored (its parents are not: they were walked)."""
        probe = self.any_dir if is_dir else self.any_file
        if probe is None or probe.match(rel) is None:
            return False
        if not self.negations:
            return True
        for rule, rx in zip(reversed(self.rules), reversed(self.compiled), strict=True):
            if (is_dir or not rule.dir_only) and rx.match(rel):
                return not rule.negated
        return False

    def below(self, base: str, text: str) -> Rules:
        """These rules with a folder's ``.gitignore`` (its text) on top."""
        more = tuple(r for r in (compile_rule(line, base) for line in text.splitlines()) if r is not None)
        return Rules.of(self.rules + more) if more else self


_CACHE: dict[tuple[Rule, ...], Rules] = {}
EMPTY = Rules()


@dataclass(frozen=True)
class Limits:
    """The caps and the ``DSH_CHECKPOINT_IGNORE`` patterns of one workspace's checkpoints (the
    ``.gitignore`` files are read by the walk, folder by folder)."""

    max_file: int = DEFAULT_MAX_FILE
    max_total: int = DEFAULT_MAX_TOTAL
    extra: tuple[Rule, ...] = field(default_factory=tuple)
    gitignore: bool = True

    @property
    def rules(self) -> Rules:
        return Rules.of(self.extra)


def read_gitignore(folder: str) -> str:
    try:
        with open(os.path.join(folder, GITIGNORE), encoding="utf-8", errors="replace") as fh:
            return fh.read(1_000_000)
    except OSError:
        return ""


def _size(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise UserError(f"{name}={raw!r} is not a number of bytes", code="BAD_CONFIG") from None
    if value < 0:
        raise UserError(f"{name} must be >= 0 bytes, not {value}", code="BAD_CONFIG")
    return value


def limits_for(cwd: str, env: Mapping[str, str] | None = None) -> Limits:
    """The limits of the workspace ``cwd`` from ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    extra = tuple(r for r in (compile_rule(p.strip()) for p in env.get("DSH_CHECKPOINT_IGNORE", "").split(","))
                  if r is not None)
    return Limits(_size(env, "DSH_CHECKPOINT_MAX_FILE", DEFAULT_MAX_FILE),
                  _size(env, "DSH_CHECKPOINT_MAX_TOTAL", DEFAULT_MAX_TOTAL), extra)
