"""``sessions --search``: an SQLite FTS5 index in DSH_HOME, rebuilt when missing, refreshed when
stale, kept current by a live observer — over real session logs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from dsh_notebook.observe.indexer import index_writer
from dsh_notebook.observe.search import INDEX_NAME, SearchIndex
from dsh_notebook.observe.search_view import search_sessions
from dsh_notebook.session.session import Session
from dsh_notebook.session.store import SessionStore
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    StepEnd,
    StepStart,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import (
    AssistantMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def tool_turn(s: Session, turn: int, prompt: str, args: str, result: str, answer: str) -> None:
    s.append(TurnStart(turn=turn))
    s.append(UserMessageEvent(turn=turn, message=user_text(prompt)))
    s.append(StepStart(turn=turn, step=0))
    call = ToolCallBlock(id=f"c{turn}", name="read", arguments=args)
    s.append(AssistantMessageEvent(turn=turn, step=0, message=AssistantMessage(content=(call,))))
    seq = s.append(ToolCall(turn=turn, step=0, call_id=f"c{turn}", name="read", arguments=args)).seq
    s.append(ToolResult(turn=turn, step=0, message=tool_text(f"c{turn}", result), source_event_seqs=(seq,)))
    s.append(StepEnd(turn=turn, step=0))
    s.append(StepStart(turn=turn, step=1))
    s.append(AssistantMessageEvent(turn=turn, step=1, message=AssistantMessage(content=(TextBlock(text=answer),))))
    s.append(StepEnd(turn=turn, step=1))
    s.append(TurnEnd(turn=turn, reason=TurnEndReason(kind="completed")))


def cli_search(home: Path, text: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh("sessions", "--search", text, "--json", env=env, timeout=60)


def test_a_word_only_one_tool_result_holds_is_found_there_only(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a, b = store.create("/ws"), store.create("/ws")
    tool_turn(a, 0, "read the notes", '{"file_path": "notes.txt"}', "the secret word is zanzibarquux", "done")
    tool_turn(b, 0, "read the notes too", '{"file_path": "todo.txt"}', "buy milk", "done zanzibar")
    store.close_all()
    done = cli_search(tmp_path, "zanzibarquux")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["sessions"]
    assert [s["sessionId"] for s in found] == [a.id]
    (match,) = found[0]["matches"]
    assert match["type"] == "tool/result" and match["seq"] == 5 and "[zanzibarquux]" in match["snippet"]
    # prompts, answers and tool arguments are searched too; every word must occur
    assert [s["sessionId"] for s in search_sessions(tmp_path, "todo.txt")] == [b.id]
    assert {m["type"] for s in search_sessions(tmp_path, "notes") for m in s["matches"]} == {
        "user/message", "tool/call", "assistant/message"}
    assert search_sessions(tmp_path, "milk zanzibarquux") == []
    text = dsh("sessions", "--search", "zanzibarquux", timeout=60, env={**os.environ, "DSH_HOME": str(tmp_path), "PYTHONPATH": str(REPO)})
    assert text.stdout.splitlines()[0].startswith(f"{a.id}  1 match")
    assert text.stdout.splitlines()[1].split()[:2] == ["5", "tool/result"]


def test_deleted_index_is_rebuilt_and_stale_one_refreshed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a = store.create("/ws")
    tool_turn(a, 0, "first", "{}", "alpha result", "ok")
    store.flush(a.id)
    assert [s["sessionId"] for s in search_sessions(tmp_path, "alpha")] == [a.id]
    (tmp_path / INDEX_NAME).unlink()
    assert [s["sessionId"] for s in search_sessions(tmp_path, "alpha")] == [a.id]  # rebuilt
    (tmp_path / INDEX_NAME).write_bytes(b"this is not a database")
    assert [s["sessionId"] for s in search_sessions(tmp_path, "alpha")] == [a.id]  # corrupt: rebuilt
    tool_turn(a, 1, "second", "{}", "omega result", "ok")
    store.flush(a.id)  # the log grew behind the index's back: stale
    found = search_sessions(tmp_path, "omega")
    assert [m["seq"] for s in found for m in s["matches"]] == [a.events[-6].seq]
    assert len(search_sessions(tmp_path, "result")[0]["matches"]) == 2  # nothing indexed twice
    store.close(a.id)
    (tmp_path / "sessions" / f"{a.id}.jsonl").unlink()
    assert search_sessions(tmp_path, "alpha") == []  # the index is never the only copy


def test_live_observer_indexes_flushed_events_off_the_loop(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a = store.create("/ws")
    writer = index_writer()
    a.subscribe(writer.observer(tmp_path, store.path_for(a.id)))
    tool_turn(a, 0, "live prompt", "{}", "quokkaword", "ok")
    store.flush(a.id)
    writer.touch(tmp_path, store.path_for(a.id))
    assert writer.wait_idle(10)
    index = SearchIndex(tmp_path)
    try:  # no refresh: what the live writer put there
        assert [(m.session_id, m.type) for m in index.search("quokkaword")] == [(a.id, "tool/result")]
    finally:
        index.close()
    store.close_all()


def test_search_without_words_is_a_coded_error(tmp_path: Path) -> None:
    done = cli_search(tmp_path, "  ??  ")
    assert done.returncode == 2 and "BAD_FLAG" in done.stderr
