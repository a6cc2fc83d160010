"""session/follow and session/control: snapshot + cursor, reconnects, saved sessions, control."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.errors import HostError
from dsh_notebook.host.host import Host
from dsh_notebook.wire.base import dump

from .support import HoldModel, Models, RawConn, make_host, wait_for

FIX = "run the tests; if they fail fix src/math.ts; tell me the result"


def full_run(client: DshClient) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]]]:
    """One uninterrupted follow of a whole fix-tests run: (session, frames, events)."""
    sid = client.create_session().session_id
    frames: list[dict[str, Any]] = []
    handle = client.follow(sid, on_frame=lambda f, _m: frames.append(f))
    outcome = handle.wait_turn_end(client.prompt(FIX, sid).request_id, timeout=60)
    assert outcome.completed and "tests pass" in outcome.final_answer
    handle.wait(lambda m: m.status == "idle", timeout=20)
    events = [dump(e) for e in handle.model.events]
    handle.close()
    return sid, frames, events


@pytest.mark.integration
def test_follow_frames_are_ordered_and_complete(client: DshClient) -> None:
    sid, frames, events = full_run(client)
    assert frames[0]["type"] == "snapshot" and frames[0]["cursor"] == len(frames[0]["events"]) - 1
    durable = frames[0]["events"] + [f["event"] for f in frames if f["type"] == "event"]
    assert [e["seq"] for e in durable] == list(range(len(durable)))
    assert durable == events
    kinds = {f["type"] for f in frames}
    assert {"assistant-stream", "tool-runtime", "status", "event"} <= kinds
    phases = [(f["frame"]["phase"], f["frame"]["status"]) for f in frames if f["type"] == "tool-runtime"]
    assert ("execute", "start") in phases and ("result", "done") in phases
    ends = [f["frame"]["outcome"] for f in frames if f["type"] == "assistant-stream" and f["frame"]["kind"] == "end"]
    assert ends and all(o["kind"] == "committed" for o in ends)
    by_seq = {e["seq"]: e for e in durable}
    assert all(by_seq[o["seq"]]["type"] == "assistant/message" for o in ends)


@pytest.mark.integration
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_reconnect_from_any_cursor_equals_one_uninterrupted_follow(client: DshClient, data: st.DataObject) -> None:
    if not hasattr(client, "_full"):
        client._full = full_run(client)  # type: ignore[attr-defined]
    sid, _frames, events = client._full  # type: ignore[attr-defined]
    cursor = data.draw(st.integers(-1, len(events) - 1))
    first = _fold(sid, events[: cursor + 1])  # what a first connection had seen before it dropped
    handle = client.follow(sid, model=first)  # reconnect from its cursor, folding into it
    handle.wait_snapshot()
    handle.close()
    whole = _fold(sid, events)
    assert [dump(e) for e in first.events] == events and first.cursor == events[-1]["seq"] and not first.gap
    for key in ("events", "turnEnds", "inbox", "submissions", "tools", "approvals"):
        assert first.state()[key] == whole.state()[key], key

    fresh = client.follow(sid, cursor=cursor)  # a fresh model at that cursor holds only the rest
    fresh.wait_snapshot()
    fresh.close()
    assert [dump(e) for e in fresh.model.events] == events[cursor + 1 :] and fresh.model.start == cursor


def _fold(sid: str, events: list[dict[str, Any]]) -> ClientSessionModel:
    m = ClientSessionModel(sid)
    header = {"type": "session", "version": 1, "id": sid, "cwd": "/", "createdAt": 0}
    live = {"attached": False, "status": "idle", "turn": None, "step": None, "assistant": None}
    m.apply({"type": "snapshot", "sessionId": sid, "header": header, "cursor": len(events) - 1, "events": events, "live": live})
    return m


@pytest.mark.integration
def test_reconnect_mid_run_loses_and_duplicates_nothing(client: DshClient, models: Models) -> None:
    models.pace = 0.002
    reference = client.follow(sid := client.create_session().session_id)
    rid = client.prompt(FIX, sid).request_id
    pieces: list[dict[str, Any]] = []
    cursor: int | None = None
    for _ in range(6):  # follow briefly, drop, reconnect from the last cursor
        seen = threading.Event()
        h = client.follow(sid, cursor=cursor, on_frame=lambda f, _m, seen=seen: seen.set() if f["type"] == "event" else None)
        h.wait_snapshot()
        seen.wait(2)
        h.close()
        wait_for(lambda h=h: h.closed)
        with h.cond:
            assert not h.model.gap
            pieces.extend(h.model.events)
            cursor = h.model.cursor
    final = reference.wait_turn_end(rid, timeout=60)
    assert final.completed
    last = client.follow(sid, cursor=cursor)
    last.wait(lambda m: any(e.type == "turn/end" for e in m.events) or m.cursor >= final_seq(reference), timeout=20)
    pieces.extend(last.model.events)
    last.close()
    reference.wait(lambda m: m.cursor >= pieces[-1].seq, timeout=20)
    assert [e.seq for e in pieces] == list(range(len(pieces)))
    assert pieces == reference.model.events[: len(pieces)]
    reference.close()


def test_bad_cursor_and_unknown_session(client: DshClient) -> None:
    sid = client.create_session().session_id
    for target, cursor, code in ((sid, 99, "BAD_ARGS"), ("s_000000000000", None, "UNKNOWN_SESSION")):
        h = client.follow(target, cursor=cursor)
        try:
            h.wait_snapshot(timeout=10)
        except HostError as exc:
            assert exc.code == code
        else:
            raise AssertionError("follow accepted")


def test_follow_of_a_saved_session_then_resume(tmp_path: Path, models: Models) -> None:
    h1 = make_host(tmp_path / "home", models=models)
    c1 = DshClient(h1)
    sid = c1.create_session().session_id
    c1.wait_turn_end(sid, c1.prompt("summarize the README", sid).request_id, timeout=30)
    c1.close()
    h1.shutdown()
    h2 = make_host(tmp_path / "home", models=models)
    try:
        c2 = DshClient(h2)
        follower = c2.follow(sid)
        follower.wait_snapshot()
        assert sid not in h2.registry.live  # following did not resume it
        saved_cursor = follower.model.cursor
        assert follower.model.turn_ends and follower.model.status == "idle"
        outcome = c2.wait_turn_end(sid, c2.prompt("summarize the README again", sid).request_id, timeout=30)
        assert outcome.completed and outcome.turn == 2
        follower.wait(lambda m: m.turn_end_after(saved_cursor), timeout=20)
        types = [e.type for e in follower.model.events[saved_cursor + 1 :]]
        assert types[0] == "session/end-seed" and "turn/start" in types
        assert [e.seq for e in follower.model.events] == list(range(len(follower.model.events)))
        c2.close()
    finally:
        h2.shutdown()


def test_control_baseline_then_queue_and_status(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    conn = RawConn(host)
    conn.send({"type": "open", "streamId": "c", "endpoint": "session/control", "payload": {"args": {}}})
    assert conn.next()["value"] == {"type": "baseline", "sessions": []}
    sid = client.create_session(model="fake:hold").session_id
    client.prompt("one", sid, request_id="a1")
    wait_for(lambda: len(hold.requests) == 1)
    client.prompt("two", sid, request_id="a2")
    client.prompt("steer", sid, mode="steer", request_id="a3")
    frames: list[dict[str, Any]] = []
    conn.until(lambda m: frames.append(m["value"]) or any(i.get("requestId") == "a3" for i in m["value"].get("items", ())))
    queue = frames[-1]["items"]
    assert [(i["placement"], i["requestId"], i["text"]) for i in queue] == [("steering", "a3", "steer"), ("queued", "a2", "two")]
    assert {"type": "status", "sessionId": sid, "status": "running"} in frames
    hold.release.set()
    conn.until(lambda m: m["value"] == {"type": "status", "sessionId": sid, "status": "idle"}, timeout=30)
    baseline = RawConn(host)
    baseline.send({"type": "open", "streamId": "c2", "endpoint": "session/control", "payload": {}})
    assert baseline.next()["value"] == {"type": "baseline", "sessions": [{"sessionId": sid, "status": "idle", "queue": []}]}


def final_seq(handle: Any) -> int:
    with handle.cond:
        return int(handle.model.turn_ends[-1]["seq"])
