"""Issue 21 (low): on a full disk the search indexer printed a traceback on every turn. Now one
warning line, and indexing is off for that ``DSH_HOME``. The disk is a real, full tmpfs mounted
in a private mount namespace (``unshare -m``, root only); the session logs live elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = r"""
import os, sys
from pathlib import Path
from dsh_notebook.observe.indexer import index_writer
from dsh_notebook.session.store import SessionStore

home, roomy = Path(sys.argv[1]), Path(sys.argv[2])
(home / "sessions").symlink_to(roomy)          # the logs have room; $DSH_HOME itself is full
with open(home / "filler", "wb") as f:
    try:
        while True:
            f.write(b"x" * 65536)
            f.flush()
    except OSError:
        pass
store = SessionStore(home)
session = store.create(cwd="/tmp")
log = home / "sessions" / f"{session.id}.jsonl"
writer = index_writer()
for turn in range(4):                           # four turns, each refreshing the index
    writer.touch(home, log)
    assert writer.wait_idle(60)
print("TURNS-DONE", flush=True)
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare -m")
def test_a_full_disk_gives_one_warning_and_no_traceback(tmp_path: Path) -> None:
    home, roomy = tmp_path / "home", tmp_path / "roomy"
    home.mkdir()
    roomy.mkdir()
    shell = f'mount -t tmpfs -o size=256k dsh-full "{home}" && exec "$0" -c "$1" "{home}" "{roomy}"'
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", shell, sys.executable, SCRIPT],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO), "DSH_HOME": str(home)})
    assert "TURNS-DONE" in done.stdout, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [ln for ln in done.stderr.splitlines() if "search index" in ln]
    assert len(lines) == 1, done.stderr
    assert "indexing is off" in lines[0] and "full" in lines[0]
