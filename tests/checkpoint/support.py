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


class Turns:
    """A session's checkpoint events over real snapshots of a real workspace, turn by turn — what
    the turn hooks append (the agent itself is not under test where this is used)."""

    def __init__(self, store: object, ws: Path) -> None:
        self.store, self.ws = store, ws
        self.events: list[object] = []
        self._start: dict[int, object] = {}

    def add(self, event: object) -> None:
        self.events.append(event.model_copy(update={"seq": len(self.events), "time": 1}))  # type: ignore[attr-defined]

    def start(self, turn: int) -> None:
        from dsh_notebook.wire.events import CheckpointTaken, TurnStart

        snap = self.store.take(str(self.ws))  # type: ignore[attr-defined]
        self._start[turn] = snap
        self.add(TurnStart(seq=0, time=0, turn=turn))
        self.add(CheckpointTaken(seq=0, time=0, turn=turn, snapshot=snap.id, cwd=snap.cwd))

    def end(self, turn: int) -> None:
        from dsh_notebook.checkpoint.diff import diff_listings
        from dsh_notebook.checkpoint.turns import changes_event

        start, end = self._start[turn], self.store.take(str(self.ws))  # type: ignore[attr-defined]
        ev = changes_event(turn, start.id, end.id, diff_listings(start.listing, end.listing))  # type: ignore[attr-defined]
        self.add(ev)

    def timeline(self) -> object:
        from dsh_notebook.checkpoint.rewind import timeline

        return timeline(self.events, str(self.ws))  # type: ignore[arg-type]
