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
