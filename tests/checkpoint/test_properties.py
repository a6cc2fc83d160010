"""Property: for any tree and any later changes to it, restoring the first snapshot gives back the
first tree exactly (bytes, modes, symlinks, folders; files created since removed)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.checkpoint.restore import apply_plan, plan_restore
from dsh_notebook.checkpoint.store import CheckpointStore
from tests.checkpoint.support import tree_state

NAMES = st.sampled_from(["a", "b", "c.txt", "d.py", "e e"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
FILES = st.dictionaries(PATHS, st.tuples(st.binary(max_size=64), st.sampled_from([0o600, 0o644, 0o755])), max_size=8)


def build(root: Path, files: dict[str, tuple[bytes, int]]) -> None:
    for rel, (data, mode) in sorted(files.items()):
        p = root / rel
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            if p.is_dir():
                continue
            p.write_bytes(data)
            p.chmod(mode)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue  # a path that is both a file and a folder: keep the first


def mutate(root: Path, files: dict[str, tuple[bytes, int]], drop: list[int], link: bool) -> None:
    existing = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    for i in drop:
        if existing:
            victim = root / existing[i % len(existing)]
            if victim.exists():
                victim.unlink()
    build(root, files)
    if link and not (root / "lnk").exists():
        os.symlink("a", root / "lnk")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=FILES, later=FILES, drop=st.lists(st.integers(0, 20), max_size=4), link=st.booleans())
def test_restore_gives_back_the_first_tree(first: dict[str, tuple[bytes, int]], later: dict[str, tuple[bytes, int]],
                                            drop: list[int], link: bool) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        ws = tmp / "ws"
        ws.mkdir()
        build(ws, first)
        want = tree_state(ws)
        store = CheckpointStore(tmp / "home")
        snap = store.take(str(ws))
        mutate(ws, later, drop, link)
        now = store.take(str(ws))
        out = apply_plan(store, str(ws), plan_restore(store.listing(snap.id), now.listing, now.listing))
        assert not out.failed
        assert tree_state(ws) == want
    finally:
        shutil.rmtree(tmp)
