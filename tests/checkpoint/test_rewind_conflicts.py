"""A rewind loses nothing of the user's (issue 35 finding 7, issue 38 item 4), writes nothing it
should not (finding 1's tampered mode, finding 8's planted symlink, finding 11's planted hook), and
is all or nothing. Real workspaces and a real store; the log's checkpoint events are built turn by
turn as the turn hooks append them (``Turns``), the agent not being under test here."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.checkpoint.rewind import (
    apply_files,
    plan_files,
    rewind_files,
    timeline,
    turn_diff,
)
from dsh_notebook.checkpoint.store import CheckpointStore
from dsh_notebook.wire.events import CheckpointKept, CheckpointReverted
from tests.checkpoint.support import Turns, tree_state


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("the user's\n")
    (root / "a.txt").write_text("a at the start\n")
    (root / "d").mkdir()
    (root / "d" / "in.txt").write_text("in d\n")
    return root


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "home")


def test_an_edit_to_a_file_the_turn_ignored_is_a_conflict_and_kept(ws: Path, store: CheckpointStore) -> None:
    turns = Turns(store, ws)
    turns.start(1)
    (ws / ".gitignore").write_text("a.txt\n")  # the turn ignores a.txt and changes it
    (ws / "a.txt").write_text("a by the agent\n")
    turns.end(1)
    (ws / "a.txt").write_text("the user's later work\n")  # no checkpoint sees it (ignored)
    fr = rewind_files(store, turns.timeline(), 1)  # type: ignore[arg-type]
    assert fr.plan.conflicts == ["a.txt"] and not fr.rolled_back
    assert (ws / "a.txt").read_text() == "the user's later work\n"
    assert not (ws / ".gitignore").exists()  # the rest of the turn is undone
    forced = rewind_files(store, turns.timeline(), 1, force=True)  # type: ignore[arg-type]
    assert "a.txt" in forced.outcome.written and (ws / "a.txt").read_text() == "a at the start\n"  # type: ignore[union-attr]


def test_a_file_put_where_the_turn_deleted_a_folder_is_a_conflict(ws: Path, store: CheckpointStore) -> None:
    turns = Turns(store, ws)
    turns.start(1)
    shutil.rmtree(ws / "d")
    turns.end(1)
    (ws / "d").write_text("the user's file, where the folder was\n")
    fr = rewind_files(store, turns.timeline(), 1)  # type: ignore[arg-type]
    assert fr.plan.conflicts == ["d", "d/in.txt"] and fr.failed == [] and not fr.rolled_back
    assert (ws / "d").read_text() == "the user's file, where the folder was\n"


def test_a_folder_holding_ignored_files_is_not_replaced_by_a_file(ws: Path, store: CheckpointStore) -> None:
    turns = Turns(store, ws)
    turns.start(1)
    (ws / "a.txt").unlink()
    (ws / "a.txt").mkdir()
    (ws / "a.txt" / "x.log").write_text("made by the turn\n")
    turns.end(1)
    (ws / ".gitignore").write_text("*.cache\n")
    (ws / "a.txt" / "notes.cache").write_text("the user's, ignored\n")
    fr = rewind_files(store, turns.timeline(), 1, force=True)  # type: ignore[arg-type]
    assert "a.txt" in fr.plan.conflicts and (ws / "a.txt" / "notes.cache").read_text() == "the user's, ignored\n"


def test_revert_then_undo_leaves_the_reverted_files(ws: Path, store: CheckpointStore) -> None:
    """Issue 38: a file put back by the inspector's Revert was deleted again by the next undo."""
    turns = Turns(store, ws)
    turns.start(1)
    (ws / "a.txt").unlink()  # turn 1 deletes a.txt and adds new.txt
    (ws / "new.txt").write_text("new\n")
    turns.end(1)
    turns.start(2)
    (ws / "two.txt").write_text("turn 2\n")
    turns.end(2)
    for path in ("a.txt", "new.txt"):  # the user reverts both of turn 1's changes
        fr = rewind_files(store, turns.timeline(), 1, only={path})  # type: ignore[arg-type]
        turns.add(CheckpointReverted(to_turn=1, paths=(path,), written=tuple(fr.outcome.written),  # type: ignore[union-attr]
                                     removed=tuple(fr.outcome.removed), before=fr.before, after=fr.after))  # type: ignore[union-attr]
    assert (ws / "a.txt").read_text() == "a at the start\n" and not (ws / "new.txt").exists()
    undo = rewind_files(store, turns.timeline(), 2)  # type: ignore[arg-type]
    assert sorted(undo.plan.conflicts) == ["a.txt", "new.txt"]
    assert undo.outcome.removed == ["two.txt"] and undo.outcome.written == []  # type: ignore[union-attr]
    assert (ws / "a.txt").read_text() == "a at the start\n" and not (ws / "new.txt").exists()


def test_kept_files_are_left_by_rewinds_over_their_turn_until_reverted(ws: Path, store: CheckpointStore) -> None:
    turns = Turns(store, ws)
    turns.start(1)
    (ws / "a.txt").write_text("a by the agent\n")
    (ws / "new.txt").write_text("new\n")
    turns.end(1)
    turns.add(CheckpointKept(turn=1, paths=("a.txt",)))
    fr = rewind_files(store, turns.timeline(), 1)  # type: ignore[arg-type]
    assert fr.plan.kept == ["a.txt"] and fr.outcome.removed == ["new.txt"]  # type: ignore[union-attr]
    assert (ws / "a.txt").read_text() == "a by the agent\n"
    turns.add(CheckpointReverted(to_turn=1, paths=("a.txt",)))  # a Revert after the Keep: no longer kept
    assert timeline(turns.events, str(ws)).kept_since(1) == frozenset()  # type: ignore[arg-type]


def test_a_tampered_snapshot_mode_never_comes_back_setuid(ws: Path, store: CheckpointStore) -> None:
    (ws / "tool.sh").write_text("#!/bin/sh\n")
    (ws / "tool.sh").chmod(0o755)
    snap = store.take(str(ws))
    path = store.root / "snapshots" / f"{snap.id}.json"
    doc = json.loads(path.read_text())
    doc["files"]["tool.sh"][1] = 0o6777  # tampered: setuid, setgid, world-writable
    doc["files"]["d"][1] = 0o7777
    path.write_text(json.dumps(doc))
    store._listings.clear()
    (ws / "tool.sh").unlink()
    shutil.rmtree(ws / "d")
    turns = Turns(store, ws)
    turns.add(turns_taken(snap.id, str(ws)))
    old = os.umask(0o022)
    try:
        fr = rewind_files(store, turns.timeline(), 1, force=True)  # type: ignore[arg-type]
    finally:
        os.umask(old)
    assert not fr.failed, fr.failed
    for p in ("tool.sh", "d"):
        mode = stat.S_IMODE((ws / p).lstat().st_mode)
        assert mode & 0o7000 == 0 and mode & 0o022 == 0, (p, oct(mode))
    assert stat.S_IMODE((ws / "tool.sh").stat().st_mode) == 0o755


def turns_taken(snapshot: str, cwd: str) -> object:
    from dsh_notebook.wire.events import CheckpointTaken

    return CheckpointTaken(turn=1, snapshot=snapshot, cwd=cwd)


def test_a_symlink_planted_between_plan_and_apply_writes_nothing_outside_and_rolls_back(
        ws: Path, store: CheckpointStore, tmp_path: Path) -> None:
    outside = tmp_path / "root-only"
    outside.mkdir(mode=0o700)
    turns = Turns(store, ws)
    turns.start(1)
    (ws / "late.txt").write_text("made by the turn\n")
    shutil.rmtree(ws / "d")  # the rewind must make d again and write d/in.txt
    (ws / "a.txt").write_text("a by the agent\n")
    turns.end(1)
    before = tree_state(ws)
    fr = plan_files(store, turns.timeline(), 1)  # type: ignore[arg-type]
    assert fr.plan.removes == ["late.txt"] and [p for p, _ in fr.plan.mkdirs] == ["d"]
    os.symlink(outside, ws / "d")  # the racer's move, after the plan
    apply_files(store, fr)
    assert os.listdir(outside) == []
    assert fr.rolled_back and any(p == "d" and "CHECKPOINT_UNSAFE_PATH" in why for p, why in fr.failed), fr.failed
    before["d"] = ("l", 0, str(outside).encode())
    assert tree_state(ws) == before  # late.txt (removed first) was put back: nothing of the rewind stays


GIT = shutil.which("git")


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_a_planted_fsmonitor_is_a_change_of_the_turn_and_is_rewound(ws: Path, store: CheckpointStore,
                                                                    tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run([GIT or "git", "init", "-q"], cwd=ws, check=True, env=env)
    config = (ws / ".git" / "config").read_text()
    turns = Turns(store, ws)
    turns.start(1)
    marker = tmp_path / "fsmonitor-ran"
    with open(ws / ".git" / "config", "a") as fh:  # what a hostile turn plants
        fh.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n')
    (ws / ".git" / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    turns.end(1)
    diff = turn_diff(store, turns.timeline(), 1)  # type: ignore[arg-type]  # what %dsh changes shows
    assert "+++ b/.git/config" in diff and "+\tfsmonitor = " in diff and "+++ b/.git/hooks/pre-commit" in diff
    fr = rewind_files(store, turns.timeline(), 1)  # type: ignore[arg-type]
    assert sorted(fr.outcome.written + fr.outcome.removed) == [".git/config", ".git/hooks/pre-commit"]  # type: ignore[union-attr]
    assert (ws / ".git" / "config").read_text() == config
    subprocess.run([GIT or "git", "status", "--porcelain"], cwd=ws, check=True, env=env, capture_output=True)
    assert not marker.exists()
