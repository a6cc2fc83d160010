"""Admission (seed 001 L4): accepted ≠ answered, duplicates, queue vs steer, content rules."""

from __future__ import annotations

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.errors import HostError
from dsh_notebook.host.host import Host
from dsh_notebook.wire.events import InboxSpliced, TurnEnd, TurnStart, UserMessageEvent

from .support import HoldModel, Models, RawConn, events_of, wait_for, wait_idle


def user_events(host: Host, sid: str) -> list[UserMessageEvent]:
    return [e for e in events_of(host, sid) if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"]


def test_accepted_returns_before_the_run_ends(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    receipt = client.prompt("hello", sid, request_id="req_42")
    assert receipt.accepted and receipt.request_id == "req_42" and receipt.rpc_id.startswith("rpc_")
    assert client.info(sid).status == "running"  # accepted, the answer is still to come
    assert not any(isinstance(e, TurnEnd) for e in events_of(host, sid))
    hold.release.set()
    outcome = client.wait_turn_end(sid, "req_42", timeout=20)
    assert outcome.completed and outcome.final_answer.startswith("held w0")
    (user,) = user_events(host, sid)
    assert user.message.source.request_id == "req_42"
    assert user.message.source.rpc_id == receipt.rpc_id  # both ids recorded, and distinct
    assert user.message.source.request_id != user.message.source.rpc_id


def test_duplicate_request_id_is_accepted_again_and_queued_once(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    first = client.prompt("only once", sid, request_id="dup")
    second = client.prompt("only once", sid, request_id="dup")
    third = client.prompt("only once", sid, mode="steer", request_id="dup")
    assert first.accepted and second.accepted and third.accepted
    assert len({first.rpc_id, second.rpc_id, third.rpc_id}) == 3
    hold.release.set()
    client.wait_turn_end(sid, "dup", timeout=20)
    wait_idle(host, sid)
    events = events_of(host, sid)
    inserted = [m for e in events if isinstance(e, InboxSpliced) for m in e.inserted]
    assert [m.source.request_id for m in inserted] == ["dup"]
    assert [e.message.source.request_id for e in user_events(host, sid)] == ["dup"]
    assert sum(isinstance(e, TurnStart) for e in events) == 1
    decisions = [d["decision"] for d in host.controller.commands.decisions if d["requestId"] == "dup"]
    assert decisions == ["accepted", "duplicate", "duplicate"]


def test_duplicate_detection_survives_a_restart(tmp_path, models: Models) -> None:
    from .support import make_host

    h1 = make_host(tmp_path / "home", models=models)
    c1 = DshClient(h1)
    sid = c1.create_session().session_id
    c1.wait_turn_end(sid, c1.prompt("hi", sid, request_id="r-once").request_id, timeout=20)
    c1.close()
    h1.shutdown()
    h2 = make_host(tmp_path / "home", models=models)
    try:
        c2 = DshClient(h2)
        assert c2.prompt("hi", sid, request_id="r-once").accepted  # resumed, recognised, not queued
        assert [e.message.source.request_id for e in user_events(h2, sid)] == ["r-once"]
        c2.close()
    finally:
        h2.shutdown()


def test_a_reused_request_id_with_other_content_is_a_conflict(tmp_path, models: Models) -> None:
    from .support import make_host

    h1 = make_host(tmp_path / "home", models=models)
    c1 = DshClient(h1)
    sid = c1.create_session().session_id
    c1.wait_turn_end(sid, c1.prompt("first text", sid, request_id="r-1").request_id, timeout=20)
    try:
        c1.prompt("other text", sid, request_id="r-1")
        raise AssertionError("a different prompt under a used requestId was accepted")
    except HostError as exc:
        assert exc.code == "REQUEST_CONFLICT" and "r-1" in exc.message
    assert c1.prompt("first text", sid, request_id="r-1").accepted  # the same content: idempotent
    decisions = [d["decision"] for d in h1.controller.commands.decisions if d["requestId"] == "r-1"]
    assert decisions == ["accepted", "conflict", "duplicate"]
    c1.close()
    h1.shutdown()
    h2 = make_host(tmp_path / "home", models=models)  # the digest is rebuilt from the log
    try:
        c2 = DshClient(h2)
        try:
            c2.prompt("changed after restart", sid, request_id="r-1")
            raise AssertionError("accepted after a restart")
        except HostError as exc:
            assert exc.code == "REQUEST_CONFLICT"
        assert [e.message.content[0].text for e in user_events(h2, sid)] == ["first text"]
        c2.close()
    finally:
        h2.shutdown()


def test_queue_while_running_waits_for_the_next_turn(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    client.prompt("first", sid, request_id="q1")
    wait_for(lambda: len(hold.requests) == 1)
    client.prompt("second", sid, mode="queue", request_id="q2")
    assert [i.placement for i in client.info(sid).queue] == ["queued"]
    hold.release.set()
    second = client.wait_turn_end(sid, "q2", timeout=20)
    assert second.completed and second.turn == 2
    users = {e.message.source.request_id: e for e in user_events(host, sid)}
    assert users["q1"].turn == 1 and users["q2"].turn == 2


def test_steer_while_running_joins_the_running_turn(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    client.prompt("first", sid, request_id="s1")
    wait_for(lambda: len(hold.requests) == 1)
    client.prompt("actually, also this", sid, mode="steer", request_id="s2")
    assert [i.placement for i in client.info(sid).queue] == ["steering"]
    hold.release.set()
    outcome = client.wait_turn_end(sid, "s2", timeout=20)
    assert outcome.completed and outcome.turn == 1
    events = events_of(host, sid)
    assert sum(isinstance(e, TurnStart) for e in events) == 1
    users = {e.message.source.request_id: e for e in user_events(host, sid)}
    assert users["s2"].turn == 1 and users["s2"].seq > users["s1"].seq
    assert len(hold.requests) == 2  # the steer forced another step


def test_content_is_validated_with_codes(host: Host, client: DshClient) -> None:
    sid = client.create_session().session_id
    conn = RawConn(host)
    cases = [
        ([], "EMPTY_CONTENT"),
        ("   ", "EMPTY_CONTENT"),
        ([{"type": "text", "text": ""}], "EMPTY_CONTENT"),
        ([{"type": "image", "url": "x"}], "UNSUPPORTED_CONTENT"),
        ([{"type": "text", "text": "ok"}, {"type": "file"}], "UNSUPPORTED_CONTENT"),
        ([{"type": "text"}], "BAD_ARGS"),
    ]
    for i, (content, code) in enumerate(cases):
        req = {"sessionId": sid, "requestId": f"c{i}", "mode": "queue", "content": content}
        reply = conn.call("session/prompt", {"request": req}, rpc_id=f"c{i}")
        assert reply["result"]["ok"] is False and reply["result"]["error"]["code"] == code, content
    bad_mode = {"sessionId": sid, "requestId": "m", "mode": "now", "content": "x"}
    assert conn.call("session/prompt", {"request": bad_mode}, rpc_id="m")["result"]["error"]["code"] == "BAD_ARGS"
    unknown = {"sessionId": "s_ffffffffffff", "requestId": "u", "mode": "queue", "content": "x"}
    assert conn.call("session/prompt", {"request": unknown}, rpc_id="u")["result"]["error"]["code"] == "UNKNOWN_SESSION"
    assert user_events(host, sid) == []


def test_client_side_args_are_checked_with_the_same_descriptor(client: DshClient) -> None:
    try:
        client.remote.session.prompt(request={"sessionId": "s_1"})
    except HostError as exc:
        assert exc.code == "BAD_ARGS"
    else:
        raise AssertionError("missing fields accepted")
