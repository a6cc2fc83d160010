"""What a checkpoint never walks, copies or restores (issue 35 finding 6).

With the workspace = ``$HOME`` and the default ``$DSH_HOME=~/.dsh``, checkpoints copied the
checkpoint store, the session logs and ``~/.ssh/id_rsa`` into themselves, and a plain rewind
deleted the store's own new files. Now three sets of paths are out of every snapshot and every
restore, wherever they sit inside the workspace:

- the product's own files: ``$DSH_HOME`` (sessions, checkpoints, the search index, ``mcp.json``)
  and the store's own folder, both as spelled and as resolved;
- what the sandbox hides from commands (credential stores, Jupyter's runtime folder, ``$DSH_HOME``
  …): the sandbox owns that list; the layer that knows it (the host, the CLI) hands this module a
  function giving it for a workspace (:func:`use_hidden`), so the two can never disagree;
- the restore's own temporary names (``.dsh-restore-*``).

Paths are compared as workspace-relative POSIX paths, the workspace and every excluded path
resolved (``realpath``), so an excluded folder is skipped by one set lookup per walked entry.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)
RESTORE_TMP = ".dsh-restore-"
HiddenPaths = Callable[[str], Iterable[str]]
_HIDDEN: HiddenPaths | None = None


def use_hidden(provider: HiddenPaths | None) -> None:
    """Where the sandbox's hidden paths of a workspace come from (absolute paths; called with the
    resolved workspace). Set by the host and the CLI; ``None``: only the product's own files."""
    global _HIDDEN
    _HIDDEN = provider


def _default_home() -> str:
    return os.environ.get("DSH_HOME") or os.path.expanduser("~/.dsh")


def _rel(path: str, cwd: str) -> str | None:
    """``path`` relative to ``cwd`` when strictly inside it (``None`` otherwise)."""
    if path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return None


def excluded_paths(cwd: str, *roots: str | Path) -> frozenset[str]:
    """The workspace-relative paths (inside the resolved ``cwd``) that are never snapshotted nor
    restored: ``roots`` (``$DSH_HOME``, the store) and ``$DSH_HOME`` of the environment, each as
    spelled and resolved, plus the sandbox's hidden paths for ``cwd``."""
    cwd = os.path.realpath(cwd)
    spelled = [str(Path(r).expanduser().absolute()) for r in (*roots, _default_home())]
    candidates = {os.path.normpath(p) for p in spelled} | {os.path.realpath(p) for p in spelled}
    if _HIDDEN is not None:
        try:
            candidates.update(os.path.realpath(p) for p in _HIDDEN(cwd))
        except Exception as exc:  # the sandbox's list is unavailable: the product's files still are out
            log.warning("the sandbox's hidden paths are unknown for %s (%s): only $DSH_HOME is left out", cwd, exc)
    return frozenset(r for r in (_rel(p, cwd) for p in candidates) if r)


def is_excluded(rel: str, excluded: frozenset[str]) -> bool:
    """``rel`` is an excluded path, below one, or one of the restore's temporary names."""
    if not excluded and RESTORE_TMP not in rel:
        return False
    parts = rel.split("/")
    if parts[-1].startswith(RESTORE_TMP):
        return True
    return any("/".join(parts[:k]) in excluded for k in range(1, len(parts) + 1))
