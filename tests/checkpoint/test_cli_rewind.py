"""The check from outside (issue 26): a scripted turn through the real tools (bash in bubblewrap
where it is installed) edits, writes, ``bash rm``s and ``bash mv``s; ``checkpoints`` lists the
changes; ``rewind --files`` restores the tree byte for byte; a file changed by hand is a conflict
left alone; ``rewind --conversation`` forks a session that resumes without the turn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dsh_notebook.session.persistence import load_log
from dsh_notebook.session.store import SessionStore
from tests.checkpoint.support import DEMO, cli, tree_state


@pytest.fixture
def two_turns(tmp_path: Path, isolated_dsh_home: Path) -> tuple[Path, str, dict]:  # type: ignore[type-arg]
    ws = tmp_path / "ws"
    shutil.copytree(DEMO, ws)
    (ws / "test" / "run.mjs").chmod(0o755)
    original = tree_state(ws)
    first = cli("run", "--quiet", "--approve", "auto", "--cwd", str(ws), "--model", "script:auto", "hello")
    assert first.returncode == 0, first.stderr
    sid = first.stdout.strip().splitlines()[-1].split()[1]
    second = cli("run", "--quiet", "--approve", "auto", "--session", sid, "--model", "script:auto",
                 "make a checkpoint demo")
    assert second.returncode == 0, second.stderr
    assert tree_state(ws) != original
    return ws, sid, original


def test_checkpoints_list_the_turns_changes(two_turns: tuple[Path, str, dict]) -> None:  # type: ignore[type-arg]
    ws, sid, _ = two_turns
    out = cli("checkpoints", sid)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(ln.startswith("turn 1 ") and ln.endswith("+0 ~0 -0 files") for ln in lines), out.stdout
    assert any(ln.startswith("turn 2 ") and ln.endswith("+3 ~1 -2 files (1 renamed)") for ln in lines), out.stdout
    for expected in ("  + NOTES.md (49 B)", "  ~ src/math.ts (407 -> 430 B)", "  - package.json",
                     "  > test/run.mjs -> test/run-renamed.mjs", "  + build/out.txt (6 B)"):
        assert expected in lines, out.stdout
    diff = cli("checkpoints", sid, "--diff", "2").stdout
    assert "+// edited by the agent\n" in diff and "rename from test/run.mjs\n" in diff


def test_rewind_files_byte_for_byte_and_conflicts(two_turns: tuple[Path, str, dict], isolated_dsh_home: Path) -> None:  # type: ignore[type-arg]
    ws, sid, original = two_turns
    (ws / "NOTES.md").write_text("changed by hand\n")
    dry = cli("rewind", sid, "--to-turn", "2", "--dry-run")
    assert dry.returncode == 1 and "CONFLICT NOTES.md" in dry.stdout
    assert (ws / "package.json").exists() is False  # a dry run changes nothing
    done = cli("rewind", sid, "--to-turn", "2", "--files")
    assert done.returncode == 1, done.stderr
    assert "CONFLICT NOTES.md" in done.stdout
    state = tree_state(ws)
    assert state.pop("NOTES.md") == ("f", 0o644, b"changed by hand\n")
    assert state == original  # byte for byte, modes included; build/ and the renamed file removed
    again = cli("rewind", sid, "--to-turn", "2")  # still a conflict: the rewind did not adopt it
    assert again.returncode == 1 and "CONFLICT NOTES.md" in again.stdout
    forced = cli("rewind", sid, "--to-turn", "2", "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert tree_state(ws) == original
    events = [json.loads(line) for line in (isolated_dsh_home / "sessions" / f"{sid}.jsonl").read_text().splitlines()[1:]]
    restored = [e for e in events if e["type"] == "checkpoint/restored"]
    assert [r.get("conflicts", []) for r in restored] == [["NOTES.md"], ["NOTES.md"], []]
    assert restored[0]["written"] == ["package.json", "src/math.ts", "test/run.mjs"]
    assert restored[-1]["forced"] is True


def test_rewind_conversation_forks_without_the_turn(two_turns: tuple[Path, str, dict]) -> None:  # type: ignore[type-arg]
    ws, sid, _ = two_turns
    out = cli("rewind", sid, "--to-turn", "2", "--conversation")
    assert out.returncode == 0, out.stderr
    fork = out.stdout.strip().splitlines()[-1].split()[1]
    assert (ws / "NOTES.md").exists()  # --conversation alone leaves the files
    msgs = json.loads(cli("show", fork, "--messages").stdout)
    texts = [c.get("content") for c in msgs if c["role"] == "user"]
    assert any("hello" in str(t) for t in texts) and not any("checkpoint demo" in str(t) for t in texts)
    resumed = cli("run", "--quiet", "--approve", "auto", "--session", fork, "--model", "script:auto", "hello again")
    assert resumed.returncode == 0, resumed.stderr
    log = load_log(resumed.stdout.strip().splitlines()[-1].split()[3])
    prompts = [e.message.content[0].text for e in log.events if e.type == "user/message" and e.message.source.kind == "user"]
    assert prompts == ["hello", "hello again"]


def test_rewind_of_a_running_session_is_session_busy(two_turns: tuple[Path, str, dict], isolated_dsh_home: Path) -> None:  # type: ignore[type-arg]
    ws, sid, _ = two_turns
    store = SessionStore(isolated_dsh_home)
    store.resume(sid)  # this process holds the writer lock, as a running host does
    try:
        out = cli("rewind", sid, "--to-turn", "2")
    finally:
        store.close(sid)
    assert out.returncode == 2 and "SESSION_BUSY" in out.stderr
    assert (ws / "NOTES.md").exists()
