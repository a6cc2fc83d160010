"""The bundled demo workspace: a tiny TypeScript project whose test really fails.

``copy_demo_workspace()`` copies it into a fresh temporary folder (or ``dest``) so an agent can
run real tools on it — ``node test/run.mjs`` fails on the bug in ``src/math.ts`` line 8 until the
bug is fixed — without ever touching the packaged originals.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

from ..errors import UserError

WORKSPACE = Path(__file__).with_name("workspace")
"""The packaged originals (read-only by convention)."""


def copy_demo_workspace(dest: str | Path | None = None) -> Path:
    """Copy the demo workspace and return the copy's path.

    Without ``dest`` the copy goes to a fresh temporary directory (``dsh-demo-*/demo``). With
    ``dest`` it goes there; ``dest`` must not exist yet or be an empty directory.
    """
    if dest is None:
        target = Path(tempfile.mkdtemp(prefix="dsh-demo-")) / "demo"
    else:
        target = Path(dest).expanduser()
        if target.exists():
            if not target.is_dir() or any(target.iterdir()):
                raise UserError(
                    f"cannot copy the demo workspace into {target}: it exists and is not empty",
                    code="DEMO_DEST_NOT_EMPTY",
                )
            target.rmdir()
    shutil.copytree(WORKSPACE, target, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    return target.resolve()


def is_demo_copy(cwd: str) -> bool:
    """A workspace made by ``copy_demo_workspace()`` (``…/dsh-demo-*/demo``)."""
    return os.path.basename(os.path.dirname(os.path.normpath(cwd))).startswith("dsh-demo-")


def default_approve(cwd: str) -> Literal["auto", "ask"]:
    """``auto`` in a copy of the demo workspace, ``ask`` anywhere else."""
    return "auto" if is_demo_copy(cwd) else "ask"


__all__ = ["WORKSPACE", "copy_demo_workspace", "default_approve", "is_demo_copy"]
