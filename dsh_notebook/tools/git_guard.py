"""Git runs without the repository's programs (issue 36 item 3).

A repository's own configuration can make a harmless-looking ``git status`` run a program:
``core.fsmonitor``, hooks, ``filter.*.clean``, ``diff.*.textconv``, ``diff.external``,
credential helpers, ``core.sshCommand`` … — and a model that may write files may write
``.git/config``. Two defences:

1. :func:`git_config_env` — configuration given to **every** git the bash tool runs, through
   ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_n`` / ``GIT_CONFIG_VALUE_n`` (it outranks every file):
   no fsmonitor, no hooks (``core.hooksPath=/dev/null``), ``cat`` as the pager, ``:`` as the
   editors, the default ``ssh`` / ``gpg`` / ``gpgsm`` / ``ssh-keygen``, no credential helper, no
   askpass, no ``ext::`` transport. The system file (root's) is still read; ``git -c`` on a command
   line outranks these, and such a line is never covered by a grant or an allow rule (2).
2. :func:`git_refusal` — a line that runs git is not run *unasked* (by a rule, a grant or a mode)
   when a repository it may use has configuration outside a short list of harmless keys
   (:data:`SAFE_KEYS`; drivers, filters, ``diff.external``, includes, aliases, URL rewrites are
   not on it), when git is started through a wrapper or with options that change its
   configuration or repository (``-c``, ``-C``, ``--git-dir`` …), or after a ``cd``. It is then
   asked, with the reason. The user may still allow it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .git_config import config_keys

if TYPE_CHECKING:
    from .shell_parse import ParsedLine

GIT_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("core.pager", "cat"),
    ("core.editor", ":"), ("sequence.editor", ":"), ("core.sshCommand", "ssh"), ("core.askPass", ""),
    ("credential.helper", ""), ("gpg.program", "gpg"), ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"), ("protocol.ext.allow", "never"),
)  # fmt: skip
_NEUTRALISED = frozenset(k.lower() for k, _ in GIT_OVERRIDES)
SAFE_KEYS: dict[str, frozenset[str] | None] = {  # section (subsection `*`) -> harmless keys (None: any)
    "core": frozenset({
        "repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode",
        "symlinks", "autocrlf", "eol", "safecrlf", "checkstat", "trustctime", "quotepath", "untrackedcache",
        "splitindex", "sharedrepository", "abbrev", "compression", "loosecompression", "bigfilethreshold",
        "commentchar", "whitespace", "longpaths", "preloadindex", "fscache", "multipackindex", "commitgraph",
        "sparsecheckout", "sparsecheckoutcone", "fsync", "fsyncmethod", "hidedotfiles", "protecthfs",
        "protectntfs", "warnambiguousrefs", "excludesfile", "attributesfile", "worktree", "notesref"}),
    "remote.*": frozenset({"url", "pushurl", "fetch", "push", "mirror", "tagopt", "prune", "prunetags",
                           "skipdefaultupdate", "skipfetchall"}),
    "branch.*": frozenset({"remote", "merge", "rebase", "pushremote", "description", "vscode-merge-base"}),
    "submodule.*": frozenset({"url", "active", "branch", "fetchrecursesubmodules", "ignore", "shallow"}),
    "user": frozenset({"name", "email", "signingkey", "useconfigonly"}),
    "author": frozenset({"name", "email"}), "committer": frozenset({"name", "email"}),
    "init": frozenset({"defaultbranch"}), "pull": frozenset({"rebase", "ff"}),
    "push": frozenset({"default", "autosetupremote", "followtags"}),
    "fetch": frozenset({"prune", "prunetags", "recursesubmodules", "writecommitgraph"}),
    "merge": frozenset({"ff", "conflictstyle", "log", "renames", "stat"}),
    "rebase": frozenset({"autostash", "autosquash", "updaterefs"}), "rerere": frozenset({"enabled", "autoupdate"}),
    "status": frozenset({"showuntrackedfiles", "short", "branch", "relativepaths", "submodulesummary",
                         "aheadbehind", "renames", "showstash"}),
    "diff": frozenset({"renames", "algorithm", "colormoved", "mnemonicprefix", "noprefix", "context",
                       "indentheuristic", "submodule", "ignoresubmodules", "relative"}),
    "log": frozenset({"date", "decorate", "follow", "showroot", "abbrevcommit", "showsignature"}),
    "commit": frozenset({"gpgsign", "verbose", "cleanup"}), "tag": frozenset({"gpgsign", "sort"}),
    "gpg": frozenset({"format"}), "i18n": frozenset({"commitencoding", "logoutputencoding"}),
    "index": frozenset({"version", "threads", "skiphash", "sparse"}), "feature": frozenset({"manyfiles"}),
    "extensions": frozenset({"objectformat", "worktreeconfig", "refstorage", "preciousobjects"}),
    "color": None, "color.*": None, "column": None, "advice": None, "pack": None, "gc": None, "lfs": None,
    "lfs.*": None, "maintenance": None, "maintenance.*": None, "safe": None, "worktree": None,
}  # fmt: skip
# git options (before the subcommand) that change its configuration, repository or programs
_GIT_OPTIONS = ("-c", "--config-env", "-C", "--git-dir", "--work-tree", "--exec-path", "--namespace",
                "--super-prefix", "-p", "--paginate")
_DIR_CHANGES = frozenset({"cd", "pushd", "popd"})


def git_config_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``GIT_CONFIG_*`` variables every git the bash tool runs gets (see the module): after
    the entries ``env`` already has (passed on with ``DSH_SANDBOX_ENV``), so ours win."""
    env = env or {}
    try:
        start = int(env.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    start = start if all(f"GIT_CONFIG_KEY_{n}" in env for n in range(start)) else 0
    out = {"GIT_CONFIG_COUNT": str(start + len(GIT_OVERRIDES))}
    for n, (key, value) in enumerate(GIT_OVERRIDES, start):
        out[f"GIT_CONFIG_KEY_{n}"] = key
        out[f"GIT_CONFIG_VALUE_{n}"] = value
    return out


def _unsafe_key(key: str) -> bool:
    if key in _NEUTRALISED:
        return False
    head, _, name = key.rpartition(".")
    section, dot, _sub = head.partition(".")
    allowed = SAFE_KEYS.get(f"{section}.*" if dot else section, frozenset())
    return allowed is not None and name not in allowed


def _gitdirs(workspace: Path) -> list[Path]:
    """The git directories git may use from ``workspace``: the discovered one (a ``.git``
    directory or ``gitdir:`` file, or a bare repository) with its common dir, its submodules'."""
    for d in (workspace, *workspace.parents):
        dot = d / ".git"
        gitdir: Path | None = None
        if dot.is_file():
            text = dot.read_text(encoding="utf-8", errors="replace").strip()
            gitdir = (d / text[len("gitdir:"):].strip()) if text.startswith("gitdir:") else dot
        elif dot.is_dir():
            gitdir = dot
        elif (d / "HEAD").is_file() and (d / "config").exists():
            gitdir = d
        if gitdir is None:
            continue
        found = [gitdir]
        common = gitdir / "commondir"
        if common.is_file():
            found.append(gitdir / common.read_text(encoding="utf-8", errors="replace").strip())
        modules = gitdir / "modules"
        if modules.is_dir():
            found += [p.parent for p in modules.rglob("config")]
        return found
    return []


def _config_files(workspace: Path) -> list[Path]:
    files = [g / name for g in _gitdirs(workspace) for name in ("config", "config.worktree")]
    home = Path(os.environ.get("HOME") or "/nonexistent")
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    for user_file in (home / ".gitconfig", xdg / "git" / "config"):  # writable by the tools only
        if user_file.resolve().is_relative_to(workspace.resolve()):  # when inside the workspace
            files.append(user_file)
    return [f for f in files if f.exists()]


def repository_refusal(workspace: Path) -> str | None:
    """Why git in ``workspace`` may run a program its repository configures, else None."""
    for file in _config_files(workspace):
        try:
            text = file.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            return f"the git configuration {file} cannot be read ({exc.strerror})"
        keys = config_keys(text)
        if keys is None:
            return f"the git configuration {file} cannot be read safely"
        bad = next((k for k in keys if _unsafe_key(k)), None)
        if bad is not None:
            return f"the repository's git configuration sets {bad} ({file.name}), which may run a program"
    return None


def git_start_refusal(line: ParsedLine) -> str | None:
    """Why how ``line`` starts git keeps it from running unasked, whatever the repository (git
    through a wrapper, after ``cd``, with ``-c`` / ``-C`` / ``--git-dir`` …), else None."""
    return _runs_git(line) or None


def _runs_git(line: ParsedLine) -> str | None:
    """Why how this line starts git is not for unasked runs; "" when it runs git plainly; None: no git."""
    found: str | None = None
    moved = False
    for cmd in line.commands:
        programs = [r[0] for r in cmd.resolved if r]
        if cmd.literal and cmd.literal[0] in _DIR_CHANGES:
            moved = True
        if "git" not in programs:
            continue
        if cmd.literal[0].rsplit("/", 1)[-1] != "git" or programs.count("git") > 1:
            return f"git started through `{cmd.literal[0]}`"
        if moved:
            return "git after a change of directory"
        opt = next((a for a in cmd.literal[1:] if a.startswith("-") and a.split("=", 1)[0] in _GIT_OPTIONS
                    or a.startswith("-c") and len(a) > 2), None)
        if opt is not None and cmd.literal[1:].index(opt) < _subcommand_index(cmd.literal):
            return f"git {opt.split('=', 1)[0]} (it changes git's configuration or repository)"
        found = ""
    return found


def _subcommand_index(literal: tuple[str, ...]) -> int:
    for i, a in enumerate(literal[1:]):
        if not a.startswith("-"):
            return i
    return len(literal)


def git_refusal(line: ParsedLine, workspace: str | Path | None) -> str | None:
    """Why ``line`` must not run without asking because of git (see the module), else None.
    ``workspace``: where the bash tool runs (None: the current directory)."""
    how = _runs_git(line)
    if how is None:
        return None
    if how:
        return how
    return repository_refusal(Path(workspace or os.getcwd()))


__all__ = ["GIT_OVERRIDES", "SAFE_KEYS", "git_config_env", "git_refusal", "git_start_refusal", "repository_refusal"]
