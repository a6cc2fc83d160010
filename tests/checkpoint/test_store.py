"""The checkpoint store on real files: snapshot, dedup, index reuse, ignores, caps, permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dsh_notebook.checkpoint.diff import diff_listings
from dsh_notebook.checkpoint.ignore import limits_for
from dsh_notebook.checkpoint.restore import apply_plan, plan_restore
from dsh_notebook.checkpoint.store import CheckpointStore, Entry
from tests.checkpoint.support import tree_state


def make_tree(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "b.txt").write_bytes(b"\x00\x01binary")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o750)
    os.symlink("src/a.py", root / "link")


def test_snapshot_restores_bytes_modes_links_and_removes_new_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_tree(ws)
    store = CheckpointStore(tmp_path / "home")
    before = tree_state(ws)
    snap = store.take(str(ws))
    (ws / "src" / "a.py").write_text("changed\n")
    (ws / "run.sh").chmod(0o644)
    (ws / "b.txt").unlink()
    (ws / "new").mkdir()
    (ws / "new" / "n.txt").write_text("new")
    os.unlink(ws / "link")
    os.symlink("elsewhere", ws / "link")
    now = store.take(str(ws))
    ch = diff_listings(snap.listing, now.listing)
    assert [p for p, _ in ch.added] == ["new/n.txt"]
    assert sorted(p for p, _, _ in ch.modified) == ["link", "run.sh", "src/a.py"]
    assert [p for p, _ in ch.deleted] == ["b.txt"]
    plan = plan_restore(store.listing(snap.id), now.listing, now.listing)
    out = apply_plan(store, str(ws), plan)
    assert not out.failed and not plan.conflicts
    assert tree_state(ws) == before


def test_unchanged_tree_is_the_same_snapshot_and_reads_no_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    make_tree(ws)
    store = CheckpointStore(tmp_path / "home")
    first = store.take(str(ws))
    assert first.hashed == 3 and first.new_blobs == 3
    # the files' mtimes are now older than the scan that recorded them (not racy)
    for p in ("src/a.py", "b.txt", "run.sh"):
        os.utime(ws / p, ns=(1_000_000_000, 1_000_000_000))
    store.take(str(ws))  # records the old mtimes
    second = CheckpointStore(tmp_path / "home").take(str(ws))  # a fresh process: the index on disk
    assert second.id == store.take(str(ws)).id
    assert second.hashed == 0 and second.new_blobs == 0


def test_blobs_are_deduplicated_and_private(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(5):
        (ws / f"same{i}.txt").write_text("one content\n")
    store = CheckpointStore(tmp_path / "home")
    snap = store.take(str(ws))
    assert snap.new_blobs == 1 and snap.files == 5
    for dirpath, _dirnames, filenames in os.walk(store.root):
        assert stat.S_IMODE(os.stat(dirpath).st_mode) == 0o700, dirpath
        for f in filenames:
            assert stat.S_IMODE(os.stat(Path(dirpath) / f).st_mode) == 0o600, f


def test_git_gitignore_and_env_ignores(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref")
    (ws / "node_modules" / "x").mkdir(parents=True)
    (ws / "node_modules" / "x" / "i.js").write_text("x")
    (ws / "app.log").write_text("log")
    (ws / "keep.txt").write_text("keep")
    (ws / "data").mkdir()
    (ws / "data" / "big.csv").write_text("1,2")
    (ws / ".gitignore").write_text("# comment\nnode_modules/\n*.log\n!keep.txt\n")
    limits = limits_for(str(ws), {"DSH_CHECKPOINT_IGNORE": "data/*.csv"})
    snap = CheckpointStore(tmp_path / "home").take(str(ws), limits)
    assert sorted(snap.listing) == [".gitignore", "data", "keep.txt"]


def test_caps_record_files_as_not_restorable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "big.bin").write_bytes(b"x" * 2000)
    (ws / "a.txt").write_bytes(b"a" * 600)
    (ws / "b.txt").write_bytes(b"b" * 600)
    limits = limits_for(str(ws), {"DSH_CHECKPOINT_MAX_FILE": "1000", "DSH_CHECKPOINT_MAX_TOTAL": "1000"})
    store = CheckpointStore(tmp_path / "home")
    snap = store.take(str(ws), limits)
    assert snap.listing["big.bin"].why == "over DSH_CHECKPOINT_MAX_FILE"
    assert snap.listing["a.txt"].sha is not None
    assert snap.listing["b.txt"].why == "over DSH_CHECKPOINT_MAX_TOTAL"
    assert snap.unrestorable == ["b.txt", "big.bin"]
    (ws / "b.txt").write_text("changed")
    plan = plan_restore(store.listing(snap.id), store.take(str(ws), limits).listing, None)
    assert plan.unrestorable == [("b.txt", "over DSH_CHECKPOINT_MAX_TOTAL")]


def test_delta_chain_resolves_after_many_snapshots(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(tmp_path / "home")
    ids = []
    for i in range(260):
        (ws / f"f{i % 7}.txt").write_text(f"version {i}")
        ids.append((store.take(str(ws)).id, tree_state(ws)))
    fresh = CheckpointStore(tmp_path / "home")
    for snap_id, state in ids[::23]:
        listing = fresh.listing(snap_id)
        assert {p: fresh.read_blob(e.sha or "") for p, e in listing.items()} == {
            p: v[2] for p, v in state.items()}


def test_the_index_journal_reads_back_as_written_and_compacts(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(tmp_path / "home")
    for i in range(70):  # past JOURNAL_MAX: the index is written whole again once
        (ws / f"f{i % 9}.txt").write_text(f"version {i}")
        if i % 10 == 3:
            (ws / f"f{i % 9}.txt").unlink()
        last = store.take(str(ws))
    wdir = next((store.root / "workspaces").iterdir())
    assert (wdir / "index.json").exists() and len((wdir / "index.log").read_bytes().splitlines()) < 64
    index, listing = CheckpointStore(tmp_path / "home")._index(wdir)
    assert listing == last.listing and index["head"] == last.id
    with open(wdir / "index.log", "ab") as fh:  # a torn tail (a crash mid-append) is ignored
        fh.write(b'{"meta": {"head": "torn"')
    index, listing = CheckpointStore(tmp_path / "home")._index(wdir)
    assert listing == last.listing and index["head"] == last.id


def test_file_diff_says_binary_too_large_and_unavailable(tmp_path: Path) -> None:
    from dsh_notebook.checkpoint.diff import DIFF_MAX_BYTES, file_diff

    store = CheckpointStore(tmp_path / "home")
    text_a, _ = store.put_blob(b"one\ntwo\n")
    text_b, _ = store.put_blob(b"one\nthree")
    binary, _ = store.put_blob(b"\0\1\2")
    big = b"x\n" * (DIFF_MAX_BYTES // 2 + 1)
    large, _ = store.put_blob(big)
    f = lambda sha, size=8: Entry("f", 0o644, size, sha)  # noqa: E731
    d = file_diff(store, "a.txt", f(text_a), f(text_b))
    assert (d.kind, d.added, d.removed) == ("text", 1, 1)
    assert d.text.endswith("-two\n+three\n\\ No newline at end of file\n")
    assert file_diff(store, "b.bin", f(text_a), f(binary, 3)).kind == "binary"
    assert file_diff(store, "big.txt", f(text_a), f(large, len(big))).kind == "too-large"
    gone = file_diff(store, "gone.txt", f("0" * 64), f(text_a))
    assert gone.kind == "unavailable" and gone.note is not None and "missing or corrupt" in gone.note
    assert file_diff(store, "n.txt", Entry("f", 0o600, 0, None, why="over DSH_CHECKPOINT_MAX_FILE"), f(text_a)).kind == "unavailable"
