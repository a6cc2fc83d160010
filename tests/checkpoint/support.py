"""Helpers of the checkpoint tests: a tree's exact state (bytes, modes, links), the CLI as a process."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.support.cli import dsh

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "dsh_notebook" / "demo" / "workspace"


def tree_state(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """path -> (kind, mode, bytes or link target) for everything under ``root`` but ``.git``."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            st = p.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", 0, os.readlink(p).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("d", stat.S_IMODE(st.st_mode), b"")
            else:
                out[rel] = ("f", stat.S_IMODE(st.st_mode), p.read_bytes())
    return out


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return dsh(*args, env=full, cwd=cwd, timeout=300)
