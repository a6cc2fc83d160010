"""``session/rewind`` on a host: one file alone (the inspector's Revert), a dry run, an undo of
the whole turn, and ``SESSION_BUSY`` while a turn runs (real tools on a demo copy, scripted model)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.errors import DshError
from dsh_notebook.host.host import Host
from tests.checkpoint.support import DEMO, tree_state
from tests.host.support import make_host


@pytest.fixture
def client(tmp_path: Path) -> Iterator[DshClient]:
    host: Host = make_host(tmp_path / "home")
    c = DshClient(host)
    yield c
    c.close()
    host.shutdown()


def restored_events(log: str, kind: str = "checkpoint/restored") -> list[dict]:  # type: ignore[type-arg]
    lines = Path(log).read_text().splitlines()[1:]
    return [e for e in map(json.loads, lines) if e["type"] == kind]


@pytest.mark.integration
def test_revert_one_file_dry_run_and_undo(client: DshClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    original = tree_state(ws)
    out = client.run("make a checkpoint demo", model="script:auto", cwd=str(ws), approve="auto")
    assert out.reason is not None and out.reason["kind"] == "completed"
    sid = out.session_id
    edited = (ws / "src" / "math.ts").read_bytes()

    dry = client.rewind(sid, dry_run=True)
    assert dry.dry_run and dry.to_turn == 1 and "package.json" in dry.written and dry.restored_seq is None
    assert (ws / "src" / "math.ts").read_bytes() == edited  # nothing changed

    one = client.rewind(sid, to_turn=1, paths=("src/math.ts",))
    assert one.written == ("src/math.ts",) and one.removed == () and one.restored_seq is not None
    assert (ws / "src" / "math.ts").read_bytes() == original["src/math.ts"][2]
    assert (ws / "NOTES.md").exists() and not (ws / "package.json").exists()

    whole = client.rewind(sid)
    assert "package.json" in whole.written and "NOTES.md" in whole.removed and whole.conflicts == ()
    assert tree_state(ws) == original
    log = client.info(sid).log_path
    assert log is not None
    # the per-file Revert is the user's decision (checkpoint/reverted), the undo a rewind (checkpoint/restored)
    assert [(e["paths"], e["written"]) for e in restored_events(log, "checkpoint/reverted")] == [
        (["src/math.ts"], ["src/math.ts"])]
    assert [e["written"] for e in restored_events(log)] == [list(whole.written)]


def test_rewind_while_a_turn_runs_is_session_busy(client: DshClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    created = client.create_session(cwd=str(ws), model="script:auto", approve="ask")
    receipt = client.prompt("make a checkpoint demo", created.session_id)
    deadline = time.monotonic() + 60
    while not client.info(created.session_id).pending_approvals:  # the turn waits on its first call
        assert time.monotonic() < deadline, "the turn never asked for approval"
        time.sleep(0.02)
    with pytest.raises(DshError) as err:
        client.rewind(created.session_id, to_turn=1)
    assert err.value.code == "SESSION_BUSY"
    client.remote.session.cancel(session_id=created.session_id)
    client.wait_turn_end(created.session_id, receipt.request_id, timeout=60)
    assert not (ws / "NOTES.md").exists()  # the turn was cancelled before its first call ran


@pytest.mark.integration
def test_session_diff_gives_each_changed_files_unified_diff(client: DshClient, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    original = (ws / "src" / "math.ts").read_text()
    out = client.run("make a checkpoint demo", model="script:auto", cwd=str(ws), approve="auto")
    sid = out.session_id
    every = client.remote.session.diff(session_id=sid, turn=1)
    kinds = {d.path: (d.kind, d.renamed_from) for d in every.files}
    assert kinds == {"NOTES.md": ("text", None), "build/out.txt": ("text", None), "src/math.ts": ("text", None),
                     "package.json": ("text", None), "test/run-renamed.mjs": ("same", "test/run.mjs")}
    one = client.remote.session.diff(session_id=sid, turn=1, paths=("src/math.ts",))
    (d,) = one.files
    assert d.text.startswith("--- a/src/math.ts\n+++ b/src/math.ts\n@@ ")
    assert "+// edited by the agent\n" in d.text and d.added == 1 and d.removed == 0
    assert original.splitlines()[0] in d.text  # context from the old snapshot
    gone = client.remote.session.diff(session_id=sid, turn=1, paths=("package.json",)).files[0]
    assert gone.text.startswith("--- a/package.json\n+++ /dev/null\n") and gone.added == 0 and gone.removed > 0
    with pytest.raises(DshError) as err:
        client.remote.session.diff(session_id=sid, turn=9)
    assert err.value.code == "CHECKPOINT_NOT_FOUND"


def _two_turns(client: DshClient, ws: Path) -> str:
    shutil.copytree(DEMO, ws)
    first = client.run("make a checkpoint demo", model="script:auto", cwd=str(ws), approve="auto")
    sid = first.session_id
    second = client.run("hello", sid, model="script:auto")
    assert second.reason is not None and second.reason["kind"] == "completed"
    return sid


@pytest.mark.integration
def test_revert_then_undo_respects_the_revert_and_keep_is_logged(client: DshClient, tmp_path: Path) -> None:
    """Issue 38 item 4: after Revert of a file, %dsh undo deleted it again with no conflict."""
    ws = tmp_path / "ws"
    sid = _two_turns(client, ws)
    reverted = client.rewind(sid, to_turn=1, paths=("package.json",))  # turn 1 deleted it: Revert puts it back
    assert reverted.written == ("package.json",) and (ws / "package.json").exists()
    kept = client.remote.session.keep(session_id=sid, turn=1, paths=("NOTES.md",))
    assert kept.paths == ("NOTES.md",) and kept.kept_seq > reverted.restored_seq  # type: ignore[operator]
    with pytest.raises(DshError) as err:
        client.remote.session.keep(session_id=sid, turn=1, paths=("README.md",))  # not changed by turn 1
    assert err.value.code == "BAD_ARGS"
    undo = client.rewind(sid)  # turn 2 changed nothing: the reverted file stays, reported as a conflict
    assert undo.to_turn == 2 and undo.conflicts == ("package.json",) and undo.removed == ()
    assert (ws / "package.json").exists()
    whole = client.rewind(sid, to_turn=1)  # over turn 1: the kept file is left, the reverted one is as wanted
    assert whole.kept == ("NOTES.md",) and (ws / "NOTES.md").exists() and "NOTES.md" not in whole.removed
    assert "src/math.ts" in whole.written and whole.conflicts == ()
    log = client.info(sid).log_path
    assert log is not None
    assert [e["paths"] for e in restored_events(log, "checkpoint/kept")] == [["NOTES.md"]]
    assert [e["kept"] for e in restored_events(log)][-1] == ["NOTES.md"]


@pytest.mark.integration
def test_force_after_a_conflict_acts_on_the_session_that_owns_the_checkpoints(client: DshClient,
                                                                             tmp_path: Path) -> None:
    """Issue 38 item 4: %dsh rewind 1 --force after a conflict failed CHECKPOINT_NOT_FOUND (the
    current session was the empty fork the first rewind made)."""
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    original = tree_state(ws)
    sid = client.run("make a checkpoint demo", model="script:auto", cwd=str(ws), approve="auto").session_id
    (ws / "NOTES.md").write_text("the user's edit\n")
    first = client.rewind(sid, to_turn=1, conversation=True)
    assert first.conflicts == ("NOTES.md",) and first.forked is not None
    fork = first.forked
    forced = client.rewind(fork, to_turn=1, force=True)  # what the notebook does: its current session is the fork
    assert forced.session_id == sid and forced.removed == ("NOTES.md",) and forced.forked is None
    assert tree_state(ws) == original
    undo = client.rewind(fork, force=True, dry_run=True)  # undo in the fork: the same rewind, by its owner
    assert undo.session_id == sid and undo.to_turn == 1
