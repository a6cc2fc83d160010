"""A rewind never writes outside the workspace: symlinks not followed, hard links not written
through, crafted paths refused; a missing or corrupt blob fails its files only."""

from __future__ import annotations

import os
from pathlib import Path

from dsh_notebook.checkpoint.restore import apply_plan, plan_restore
from dsh_notebook.checkpoint.store import CheckpointStore, Entry
from tests.checkpoint.support import tree_state


def test_a_folder_replaced_by_a_symlink_is_not_followed(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "f.txt").write_text("mine")
    outside.mkdir()
    (outside / "f.txt").write_text("theirs")
    store = CheckpointStore(tmp_path / "home")
    snap = store.take(str(ws))
    before = tree_state(ws)
    (ws / "sub" / "f.txt").unlink()
    (ws / "sub").rmdir()
    os.symlink(outside, ws / "sub")
    now = store.take(str(ws))
    out = apply_plan(store, str(ws), plan_restore(store.listing(snap.id), now.listing, now.listing))
    assert not out.failed
    assert (outside / "f.txt").read_text() == "theirs" and sorted(os.listdir(outside)) == ["f.txt"]
    assert tree_state(ws) == before


def test_a_symlinked_parent_is_refused_not_written_through(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    os.symlink(outside, ws / "sub")
    store = CheckpointStore(tmp_path / "home")
    sha, _ = store.put_blob(b"payload")
    target = {"sub": Entry("l", target=str(outside)), "sub/x.txt": Entry("f", 0o644, 7, sha)}
    now = store.take(str(ws))
    out = apply_plan(store, str(ws), plan_restore(target, now.listing, None))
    assert [p for p, _ in out.failed] == ["sub/x.txt"] and "UNSAFE_PATH" in out.failed[0][1]
    assert os.listdir(outside) == []


def test_hard_links_are_not_written_through(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "h.txt").write_text("original")
    store = CheckpointStore(tmp_path / "home")
    snap = store.take(str(ws))
    (ws / "h.txt").unlink()
    (outside / "o.txt").write_text("outside content")
    os.link(outside / "o.txt", ws / "h.txt")
    now = store.take(str(ws))
    out = apply_plan(store, str(ws), plan_restore(store.listing(snap.id), now.listing, now.listing))
    assert out.written == ["h.txt"]
    assert (ws / "h.txt").read_text() == "original"
    assert (outside / "o.txt").read_text() == "outside content"


def test_crafted_paths_outside_the_workspace_are_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = CheckpointStore(tmp_path / "home")
    sha, _ = store.put_blob(b"evil")
    target = {p: Entry("f", 0o644, 4, sha) for p in ("../evil.txt", "/tmp/evil.txt", "a/../../evil.txt", "ok.txt")}
    out = apply_plan(store, str(ws), plan_restore(target, {}, None))
    assert out.written == ["ok.txt"]
    assert sorted(p for p, _ in out.failed) == ["../evil.txt", "/tmp/evil.txt", "a/../../evil.txt"]
    assert not (tmp_path / "evil.txt").exists()


def test_a_corrupt_or_missing_blob_fails_its_file_and_restores_the_rest(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text(f"content of {name}")
    store = CheckpointStore(tmp_path / "home")
    snap = store.take(str(ws))
    listing = store.listing(snap.id)
    store.blob_path(listing["a.txt"].sha or "").write_text("tampered")
    store.blob_path(listing["b.txt"].sha or "").unlink()
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text("agent wrote this")
    now = store.take(str(ws))
    out = apply_plan(store, str(ws), plan_restore(listing, now.listing, now.listing))
    assert sorted(p for p, _ in out.failed) == ["a.txt", "b.txt"]
    assert all("CHECKPOINT_BLOB_MISSING" in why for _, why in out.failed)
    assert (ws / "c.txt").read_text() == "content of c.txt"
