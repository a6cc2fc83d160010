""""Allow for the rest of the session" grants for bash: an exact command, or a read-only name.

A grant is a :class:`~dsh_notebook.wire.events.Grant` ``{tool, pattern}`` logged with the answer.
For ``bash`` it is one of:

- a **name grant** ``NAME *`` (``git SUB *`` for git) when NAME is on :data:`READ_ONLY`, a short
  list of commands that only read — and only while the command avoids the options that make
  them write or run programs (``find -exec/-delete/-fprint``, ``sed -i`` and its ``e``/``w``
  commands, ``tar --checkpoint-action/--to-command/--use-compress-program``, ``git log --output``,
  ``git grep -O``, ``sort -o/--compress-program``, ``rg --pre`` …; GNU long options are also
  refused by any unique prefix, ``--out`` for ``--output``). It covers a simple command written
  with that exact name (``./cat`` or ``/tmp/cat`` is not ``cat``), without ``~`` in its arguments
  (a variable or an assignment leaves the whole line unresolved);
- an **exact grant**: the whole command line, glob-escaped — it matches that line only.

Wrappers (``env``, ``xargs``, ``timeout``, ``nice``, ``sudo`` …) are never granted by name. No
grant is offered for a line the parser cannot resolve (:attr:`.ParsedLine.unresolved`), one that
redirects output to a file or one that starts git in a way :mod:`.git_guard` never lets run
unasked (``git -C``, ``env … git``), and a grant never covers such a line. A line of several commands
(``ls | head``) is covered when every simple command is covered by some name grant, or the whole
line by an exact grant. :func:`is_read_only` says whether a line only reads (permission modes).
"""

from __future__ import annotations

import fnmatch
import re

from ..wire.events import Grant
from .git_guard import git_start_refusal
from .shell_parse import ParsedLine, SimpleCommand, parse_line

# name -> (short options refused (a letter anywhere in a `-xyz` cluster), long options refused)
_Danger = tuple[str, frozenset[str]]
_NONE: _Danger = ("", frozenset())
_GIT_OUT: _Danger = ("", frozenset({"output", "ext-diff", "textconv", "open-files-in-pager"}))
READ_ONLY: dict[str, _Danger] = {
    **dict.fromkeys((
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "grep", "egrep", "fgrep", "diff", "stat",
        "du", "df", "cut", "which", "basename", "dirname", "realpath", "whoami", "id", "uname", "true",
        "nl", "sha256sum", "sha1sum", "md5sum", "printf"), _NONE),
    "rg": ("", frozenset({"pre", "pre-glob", "search-zip"})),
    "file": ("C", frozenset({"compile"})),
    "tree": ("o", frozenset({"output"})),
    "sort": ("o", frozenset({"output", "compress-program"})),
    "date": ("s", frozenset({"set"})),
    "find": ("", frozenset()),  # checked by _find_safe (single-dash primaries)
    "sed": ("i", frozenset({"in-place", "file"})),  # and the script, by _sed_safe
    "tar": ("", frozenset()),  # checked by _tar_safe
    **{f"git {sub}": _GIT_OUT for sub in (
        "status", "log", "diff", "show", "ls-files", "rev-parse", "blame", "shortlog", "describe")},
    "git grep": ("O", frozenset({"open-files-in-pager", "output", "ext-diff", "textconv"})),
}  # fmt: skip
_FIND_BAD = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_TAR_BAD = frozenset({"checkpoint-action", "to-command", "use-compress-program", "info-script",
                      "new-volume-script", "rsh-command", "rmt-command", "index-file", "file", "extract", "get",
                      "create", "append", "update", "delete", "concatenate", "catenate", "diff", "compare",
                      "remove-files", "directory"})  # fmt: skip


def name_key(cmd: SimpleCommand) -> str | None:
    """``cat`` / ``git status``: the READ_ONLY key a simple command is spelled with, else None."""
    if not cmd.literal:
        return None
    head = cmd.literal[0]
    if head == "git" and len(cmd.literal) > 1:
        head = f"git {cmd.literal[1]}"
    return head if head in READ_ONLY else None


def _long_refused(arg: str, refused: frozenset[str]) -> bool:
    name = arg[2:].split("=", 1)[0]
    return bool(name) and any(r.startswith(name) for r in refused)


def _sed_safe(args: list[str]) -> bool:
    """sed without ``-i``, ``-f FILE``, and scripts free of ``e`` / ``w`` / ``W`` commands and of
    the ``e`` / ``w`` flags of ``s``: only ``-n``, ``-E``/``-r``, ``-e SCRIPT`` and one script."""
    scripts, k = [], 0
    while k < len(args):
        a = args[k]
        if a in ("-e", "--expression"):
            if k + 1 >= len(args):
                return False
            scripts.append(args[k + 1])
            k += 2
            continue
        if a.startswith("-") and a != "-":
            if not (set(a[1:]) <= set("nErsuz") or a in ("--quiet", "--silent", "--regexp-extended")):
                return False
        elif not scripts:
            scripts.append(a)
        k += 1
    return all(_sed_script_safe(s) for s in scripts)


_SED_ADDR = re.compile(r"(?:\d+|\$|/(?:[^/\\\n]|\\.)*/I?)(?:[,~]\+?(?:\d+|\$|/(?:[^/\\\n]|\\.)*/I?))?")
_SED_PLAIN = frozenset("pdlqQnNPDgGhHxz=")


def _sed_script_safe(script: str) -> bool:
    """One command per script, from a fixed harmless set: ``[ADDR[,ADDR]][!]CMD`` where CMD is one
    of ``p d = l q n N P D g G h H x z`` or ``s/RE/REPL/FLAGS`` (flags only ``g p i I m M`` and
    digits) or ``y/A/B/`` — so neither an ``e``/``w``/``W`` command nor an ``e``/``w`` flag."""
    text = script.strip()
    addr = _SED_ADDR.match(text)
    i = addr.end() if addr else 0
    i += 1 if text[i : i + 1] == "!" else 0
    rest = text[i:].strip()
    if rest in _SED_PLAIN or (len(rest) > 1 and rest[0] in "qQ" and rest[1:].strip().isdigit()):
        return True
    if len(rest) < 4 or rest[0] not in "sy" or rest[1] in "\\\n ":
        return False
    delim, j, parts = rest[1], 2, 0
    while j < len(rest) and parts < 2:
        if rest[j] == "\n":
            return False
        if rest[j] == "\\":
            j += 2
            continue
        parts += rest[j] == delim
        j += 1
    flags = rest[j:]
    return parts == 2 and (set(flags) <= set("gpiImM0123456789") if rest[0] == "s" else not flags)


def _find_safe(args: list[str]) -> bool:
    return not any(a in _FIND_BAD or a.startswith("-fprint") for a in args)


def _tar_safe(args: list[str]) -> bool:
    """Only a listing (``tar tf ARCHIVE``, ``tar -tvf``, ``--list``), no program-running option."""
    if not args:
        return False
    first = args[0]
    mode_ok = False
    for k, a in enumerate(args):
        if a.startswith("--"):
            if _long_refused(a, _TAR_BAD - {"file"}) or a.startswith("--file") and ":" in a:
                return False
            mode_ok = mode_ok or a == "--list"
        elif a.startswith("-") or k == 0:
            letters = a.lstrip("-")
            if set(letters) & set("cxruAdIFM") or a is first and not letters:
                return False
            mode_ok = mode_ok or "t" in letters
    return mode_ok and not any(":" in a for a in args)  # a remote archive `host:file` runs rsh


def name_grant_safe(cmd: SimpleCommand) -> str | None:
    """The READ_ONLY key of ``cmd`` when a name grant may cover it, else None."""
    key = name_key(cmd)
    if key is None or cmd.assignments or any(w.dynamic for w in cmd.words):
        return None
    args = list(cmd.literal[2:] if key.startswith("git ") else cmd.literal[1:])
    short, long = READ_ONLY[key]
    if (short or long or key in ("find", "sed", "tar")) and any(w.glob for w in cmd.words[1:]):
        return None
    for a in args:
        if a.startswith("--") and _long_refused(a, long):
            return None
        if a.startswith("-") and not a.startswith("--") and short and set(a[1:]) & set(short):
            return None
    if key == "find" and not _find_safe(args) or key == "sed" and not _sed_safe(args):
        return None
    if key == "tar" and not _tar_safe(args):
        return None
    return key


def is_read_only(parsed: ParsedLine) -> bool:
    """Whether a parsed bash line only reads: resolved, no output redirected to a file, and every
    simple command (those of a ``bash -c`` string included) a :data:`READ_ONLY` command without
    the options that make it write or run programs (:func:`name_grant_safe`). Syntactic only: a
    caller that runs it without asking also checks :func:`.git_guard.git_refusal` (the
    repository's own configuration may make ``git status`` run a program)."""
    if parsed.unresolved or parsed.writes or not parsed.commands:
        return False
    return all(name_grant_safe(cmd) is not None for cmd in parsed.commands)


def glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def glob_literal(pattern: str) -> str | None:
    """The one string a glob matches when it has no wildcard (``[*]`` is a literal ``*``), else None."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c in "*?":
            return None
        if c == "[":
            if i + 2 < len(pattern) and pattern[i + 2] == "]" and pattern[i + 1] not in "!^":
                out.append(pattern[i + 1])
                i += 3
                continue
            return None
        out.append(c)
        i += 1
    return "".join(out)


def bash_grant_for(command: str) -> Grant | None:
    """The grant an "allow for this session" answer gives for ``command`` (None: none is offered)."""
    line = parse_line(command)
    if line.unresolved or line.writes or not line.commands or not command.strip():
        return None
    if any(w.dynamic for cmd in line.commands for w in cmd.words):
        return None  # `~` may differ on the next run
    if git_start_refusal(line):
        return None  # `git -C …`, `env … git`: never covered (.git_guard), so none is offered
    keys = {name_grant_safe(c) for c in line.commands}
    if len(keys) == 1 and None not in keys:
        return Grant(tool="bash", pattern=f"{keys.pop()} *")
    return Grant(tool="bash", pattern=glob_escape(command.strip()))


def _name_grant_covers(grant: Grant, cmd: SimpleCommand) -> bool:
    key = name_grant_safe(cmd)
    return key is not None and grant.pattern == f"{key} *"


def bash_grant_covering(grants: list[Grant], command: str, line: ParsedLine | None = None) -> Grant | None:
    """The first grant that allows ``command`` (every simple command covered), else None."""
    bash = [g for g in grants if fnmatch.fnmatchcase("bash", g.tool)]
    if not bash:
        return None
    line = line or parse_line(command)
    if line.unresolved or line.writes or not line.commands:
        return None
    for g in bash:
        if glob_literal(g.pattern) == command.strip():
            return g
    used: Grant | None = None
    for cmd in line.commands:
        hit = next((g for g in bash if _name_grant_covers(g, cmd)), None)
        if hit is None:
            return None
        used = used or hit
    return used


__all__ = ["READ_ONLY", "bash_grant_covering", "bash_grant_for", "glob_escape", "glob_literal",
           "is_read_only", "name_grant_safe", "name_key"]
