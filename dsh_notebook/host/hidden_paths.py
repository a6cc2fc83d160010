"""The sandbox's hidden paths, handed to the checkpoints (issue 35 finding 6).

A checkpoint must never snapshot, copy or restore what the sandbox hides from commands (the
credential stores of a workspace that is ``$HOME``, Jupyter's runtime folder, ``$DSH_HOME`` …).
The checkpoint layer sits below the tools and cannot ask the sandbox itself; the host (and the
CLI) hand it this function, which asks :mod:`..tools.sandbox_mounts` — the one place that list is
kept — so the two can never disagree.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..checkpoint.exclude import use_hidden
from ..tools import sandbox_mounts


def sandbox_hidden(cwd: str) -> list[str]:
    """The absolute paths the sandbox keeps hidden when ``cwd`` is the workspace."""
    try:
        plan = sandbox_mounts.mount_plan(Path(cwd))
        return [*plan.hidden_dirs, *plan.hidden_files]
    except Exception:  # a workspace the sandbox refuses (WORKSPACE_UNSAFE): what it would hide anyway
        home = os.path.expanduser("~")
        names = [*getattr(sandbox_mounts, "CREDENTIAL_DIRS", ()), *getattr(sandbox_mounts, "CREDENTIAL_FILES", ())]
        return [sandbox_mounts.dsh_home(), *(os.path.join(home, n) for n in names)]


def install() -> None:
    """Checkpoints of this process leave out what the sandbox hides."""
    use_hidden(sandbox_hidden)
