"""SessionStore: open sessions, resume with crash repair, summaries."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dsh_notebook.errors import ProvenanceError, SessionError
from dsh_notebook.session import SessionStore, load_log
from dsh_notebook.wire.events import SessionEndSeed, TurnEnd, UserMessageEvent
from dsh_notebook.wire.messages import user_text
from tests.session.helpers import RawLog, die, tool_turn


def test_create_get_close(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create("/ws")
    assert re.fullmatch(r"s_[0-9a-f]{12}", s.id)
    assert store.get(s.id) is s and store.open(s.id) is s and store.open_ids == [s.id]
    assert load_log(store.path_for(s.id)).header.cwd == "/ws"  # header flushed at create
    store.close(s.id)
    assert store.get(s.id) is None
    with pytest.raises(SessionError, match="SESSION_EXISTS"):
        store.create(session_id=s.id)
    with pytest.raises(SessionError, match="BAD_SESSION_ID"):
        store.path_for("../etc")


def test_resume_closes_the_interrupted_turn_before_the_end_seed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create("/ws")
    tool_turn(s, 1, ["a"])
    tool_turn(s, 2, ["b"], answer=False, end=False)  # the process dies here
    store.flush(s.id)
    n = len(s)
    fresh = SessionStore(tmp_path)
    with pytest.raises(SessionError, match="SESSION_BUSY"):  # the first writer still holds it
        fresh.resume(s.id)
    die(store, s.id)
    r = fresh.resume(s.id)
    tail = [e.type for e in r.events[n:]]
    assert tail == ["tool/result", "step/end", "turn/end", "session/end-seed"]
    end = r.events[n + 2]
    assert isinstance(end, TurnEnd) and end.reason.kind == "interrupted"
    assert r.first_live_seq == len(r) and r.cwd == "/ws"
    # everything, closers included, is durable after resume
    assert [e.type for e in load_log(fresh.path_for(s.id)).events] == [e.type for e in r.events]
    assert fresh.resume(s.id) is r  # an open session is not resumed twice


def test_resume_of_a_closed_log_only_marks_the_seed_and_continues_it(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create()
    tool_turn(s, 1, ["a"])
    store.close(s.id)
    r = SessionStore(tmp_path).open(s.id)
    assert isinstance(r.events[-1], SessionEndSeed) and len(r) == len(s) + 1
    r.append(UserMessageEvent(message=user_text("again")))
    store2 = SessionStore(tmp_path)
    store2.close_all()
    loaded = load_log(store.path_for(s.id))
    assert len(loaded.events) == len(s) + 1  # not flushed: the store that holds r did not close
    assert list(r.derive_messages())[-1] == user_text("again")


def test_resume_revalidates_the_log(tmp_path: Path) -> None:
    raw = RawLog("s_bad000000000")
    raw.user("hi")
    call = raw.call("c1")
    raw.result("c1", cite=call)
    raw.result("c1", cite=call)  # a second result for one call
    (tmp_path / "sessions").mkdir()
    raw.write(tmp_path / "sessions" / "s_bad000000000.jsonl")
    with pytest.raises(ProvenanceError):
        SessionStore(tmp_path).resume("s_bad000000000")


def test_list_saved_summaries(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a = store.create("/a")
    tool_turn(a, 1, ["x"], prompt="first prompt " + "y" * 80)
    tool_turn(a, 2, ["z"])
    store.close(a.id)
    b = store.create("/b")
    tool_turn(b, 1, ["q"], prompt="second", answer=False, end=False)
    store.flush(b.id)
    (tmp_path / "sessions" / "broken.jsonl").write_text("not json\n")
    rows = {r.id: r for r in store.list_saved()}
    ra, rb = rows[a.id], rows[b.id]
    assert ra.title.startswith("first prompt yyy") and len(ra.title) == 60
    assert (ra.turns, ra.event_count, ra.status) == (2, len(a), "idle")
    assert ra.last_activity_ms == a.events[-1].time
    assert (rb.title, rb.turns, rb.status) == ("second", 1, "open")
    assert {r.id: r.status for r in SessionStore(tmp_path).list_saved()}[b.id] == "interrupted"
    assert rows["broken"].status == "unreadable"
    assert set(ra.to_dict()) == {"id", "title", "turns", "lastActivityMs", "eventCount", "path", "status", "cwd"}
