"""The client fold's rules on hand-built edge cases (the JS fold has the same rules; on recorded
real runs the two are compared item by item in ``test_parity.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.wire.base import dump


def ev(seq: int, type_: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "time": 1000 + seq, "type": type_, **fields}


def user(seq: int, text: str, rid: str, turn: int | None = None) -> dict[str, Any]:
    msg = {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user", "requestId": rid, "rpcId": "rpc_1"}}
    return ev(seq, "user/message", message=msg, **({"turn": turn} if turn else {}))


def spliced(seq: int, target: str, start: int, removed: int, inserted: list[dict[str, Any]], outcome: str | None = None) -> dict[str, Any]:
    extra = {"outcome": outcome} if outcome else {}
    return ev(seq, "agent/inbox/spliced", target=target, start=start, removedCount=removed, inserted=inserted, **extra)


def umsg(text: str, rid: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user", "requestId": rid}}


EVENTS = [
    spliced(0, "next-turn", 0, 0, [umsg("fix it", "req_42")]),
    ev(1, "turn/start", turn=1),
    spliced(2, "next-turn", 0, 1, [], "claimed"),
    ev(3, "step/start", turn=1, step=1),
    user(4, "fix it", "req_42", turn=1),
    ev(5, "assistant/message", turn=1, step=1, message={"role": "assistant", "content": [
        {"type": "text", "text": "reading"}, {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}]}),
    ev(6, "tool/call", turn=1, step=1, callId="c1", name="read", arguments="{}"),
    ev(7, "tool/result", turn=1, step=1, message={"role": "tool", "toolCallId": "c1", "content": [{"type": "text", "text": "file"}], "isError": False}, sourceEventSeqs=[6]),
    ev(8, "step/end", turn=1, step=1),
    ev(9, "assistant/message", turn=1, step=2, message={"role": "assistant", "content": [{"type": "text", "text": "done"}]}),
    ev(10, "turn/end", turn=1, reason={"kind": "completed"}),
]


def snapshot(events: list[dict[str, Any]], **live: Any) -> dict[str, Any]:
    header = {"type": "session", "version": 1, "id": "s_1", "cwd": "/w", "createdAt": 1}
    state = {"attached": True, "status": "idle", "turn": None, "step": None, "assistant": None, **live}
    return {"type": "snapshot", "sessionId": "s_1", "header": header, "cursor": events[-1]["seq"] if events else -1,
            "events": events, "live": state}


def test_submission_goes_pending_queued_claimed_delivered_and_the_turn_ends() -> None:
    m = ClientSessionModel("s_1")
    m.submit("req_42", "fix it")
    assert m.submissions["req_42"]["state"] == "pending"
    m.apply(snapshot([]))
    m.apply({"type": "event", "event": EVENTS[0]})
    assert m.submissions["req_42"]["state"] == "queued" and m.inbox["next-turn"][0]["requestId"] == "req_42"
    m.accepted("req_42", "rpc_7")  # the RPC answer after the splice event does not go back
    assert m.submissions["req_42"]["state"] == "queued" and m.submissions["req_42"]["rpcId"] == "rpc_7"
    for e in EVENTS[1:3]:
        m.apply({"type": "event", "event": e})
    assert m.submissions["req_42"]["state"] == "claimed" and m.inbox["next-turn"] == []
    assert m.submission_outcome("req_42") is None
    for e in EVENTS[3:]:
        m.apply({"type": "event", "event": e})
    assert m.submissions["req_42"]["state"] == "delivered"
    assert m.submission_outcome("req_42") == {"turn": 1, "reason": {"kind": "completed"}, "seq": 10}
    assert m.final_answer() == "done"
    assert m.submissions["req_42"]["turn"] == 1 and m.submissions["req_42"]["seq"] == 4
    assert m.tools["c1"] == {"callId": "c1", "name": "read", "arguments": "{}", "phases": [], "waiting": False,
                             "callSeq": 6, "resultSeq": 7, "isError": False}
    assert dump(m.event(7)) == EVENTS[7] and m.event(11) is None  # type: ignore[arg-type]


def test_duplicates_are_ignored_and_gaps_flagged() -> None:
    m = ClientSessionModel("s_1")
    m.apply(snapshot(EVENTS[:5]))
    m.apply({"type": "event", "event": EVENTS[3]})  # duplicate
    assert m.cursor == 4 and len(m.events) == 5
    m.apply({"type": "event", "event": EVENTS[7]})  # seq 7 after 4: a gap
    assert m.gap and m.cursor == 4
    m.apply(snapshot(EVENTS[5:]) | {"cursor": 10})  # a reconnect from cursor 4 repairs it
    assert not m.gap and [e.seq for e in m.events] == list(range(11))


def test_canceled_from_the_inbox() -> None:
    m = ClientSessionModel("s_1")
    m.apply(snapshot([EVENTS[0], spliced(1, "next-turn", 0, 1, [], "canceled")]))
    assert m.submissions["req_42"]["state"] == "canceled"
    assert m.submission_outcome("req_42") == {"turn": None, "reason": {"kind": "aborted", "cause": "canceled before it ran"}, "seq": 1}


def test_live_frames_stream_text_and_tool_phases() -> None:
    m = ClientSessionModel("s_1")
    m.apply(snapshot([], status="running", turn=1, step=1))
    a = "s_1/1.1.1"
    m.apply({"type": "assistant-stream", "frame": {"kind": "start", "attemptId": a, "turn": 1, "step": 1, "startedAfterSeq": 3}})
    for chunk in ({"type": "block-start", "index": 0, "blockType": "text"}, {"type": "text-delta", "index": 0, "text": "Hel"},
                  {"type": "text-delta", "index": 0, "text": "lo"}, {"type": "reasoning-delta", "index": 1, "text": "hm"},
                  {"type": "block-start", "index": 2, "blockType": "tool-call", "id": "c1", "name": "read"},
                  {"type": "tool-call-delta", "index": 2, "id": "c1", "argumentsDelta": '{"a":'},
                  {"type": "tool-call-delta", "index": 2, "id": "c1", "argumentsDelta": "1}"}):
        m.apply({"type": "assistant-stream", "frame": {"kind": "chunk", "attemptId": a, "index": 0, "time": 1, "chunk": chunk}})
    assert m.attempt is not None and m.streaming_text() == "Hello" and m.attempt["chunks"] == 7
    assert [(b["type"], b["text"]) for b in m.attempt["blocks"]] == [("text", "Hello"), ("reasoning", "hm"), ("tool-call", '{"a":1}')]
    assert (m.attempt["blocks"][2]["id"], m.attempt["blocks"][2]["name"]) == ("c1", "read")
    m.apply({"type": "tool-runtime", "frame": {"callId": "c1", "name": "read", "phase": "approval", "status": "waiting", "time": 5}})
    assert m.tools["c1"]["phases"] == [{"phase": "approval", "status": "waiting", "detail": None, "time": 5}]
    assert [a["callId"] for a in m.waiting_approvals()] == ["c1"]
    m.apply({"type": "assistant-stream", "frame": {"kind": "end", "attemptId": a, "outcome": {"kind": "abandoned"}}})
    assert m.attempt is None and m.streaming_text() == ""
    m.apply({"type": "status", "status": "idle", "turn": None, "step": None})
    assert m.status == "idle"


def test_snapshot_live_part_rebuilds_an_attempt_in_flight() -> None:
    m = ClientSessionModel("s_1")
    active = {"attemptId": "x", "turn": 1, "step": 1, "startedAfterSeq": 2,
              "chunks": [{"index": 0, "time": 1, "chunk": {"type": "text-delta", "index": 0, "text": "par"}},
                         {"index": 1, "time": 2, "chunk": {"type": "text-delta", "index": 0, "text": "tial"}}]}
    m.apply(snapshot(EVENTS[:4], status="running", turn=1, step=1, assistant=active,
                     tools={"c9": {"callId": "c9", "name": "bash", "phase": "execute", "status": "start", "time": 7}},
                     approvals=[{"callId": "c9", "name": "bash", "arguments": "{}"}]))
    assert m.streaming_text() == "partial" and m.tools["c9"]["phases"][-1]["phase"] == "execute" and "c9" in m.approvals
    m.apply(snapshot(EVENTS[:4], status="running", tools={"c9": {"callId": "c9", "name": "bash", "phase": "execute", "status": "start", "time": 7}}))
    assert len(m.tools["c9"]["phases"]) == 1  # a reconnect's snapshot does not fold the same frame twice


def test_control_frames_for_this_session_only() -> None:
    m = ClientSessionModel("s_1")
    item = {"id": "i3.0", "placement": "queued", "requestId": "r", "text": "t"}
    m.apply_control({"type": "baseline", "sessions": [{"sessionId": "s_1", "status": "running", "queue": [item]}, {"sessionId": "s_2", "status": "idle", "queue": []}]})
    assert m.queue == [item] and m.status == "running"
    m.apply_control({"type": "queue", "sessionId": "s_2", "items": []})
    assert m.queue == [item]
    m.apply_control({"type": "queue", "sessionId": "s_1", "items": []})
    m.apply_control({"type": "status", "sessionId": "s_1", "status": "idle"})
    assert m.queue == [] and m.status == "idle"


def test_a_snapshot_of_another_session_resets() -> None:
    m = ClientSessionModel("s_1")
    m.apply(snapshot(EVENTS))
    other = snapshot(EVENTS[:2]) | {"sessionId": "s_2"}
    m.apply(other)
    assert m.session_id == "s_2" and m.cursor == 1 and m.turn_ends == []
    assert m.state()["cursor"] == 1 and m.state()["submissions"]["req_42"]["state"] == "queued"  # not "delivered"


def test_items_are_parsed_into_wire_types_before_they_fold() -> None:
    m = ClientSessionModel("s_1")
    m.apply(snapshot(EVENTS[:2]))
    before = m.state()
    with pytest.raises(ValidationError):  # an unknown field: the payloads are closed
        m.apply({"type": "event", "event": {**EVENTS[2], "surprise": True}})
    with pytest.raises(ValidationError):  # a tool-runtime frame without its time
        m.apply({"type": "tool-runtime", "frame": {"callId": "c1", "name": "read", "phase": "prepare", "status": "start"}})
    assert m.state() == before  # nothing half-folded


def test_an_arguments_edit_in_the_debugger_is_what_the_fold_and_its_approval_show() -> None:
    """A real run (fixture ``debug-arguments``): paused at 03, the bash call's arguments are edited;
    from the ``debug/edit`` on, the fold's call — what the approval banner and the cell show — holds
    the edited command, and the approval asked afterwards is about that command."""
    from tests.client.parity import replay
    from tests.fixtures.record_streams import EDITED_COMMAND, OUT, load

    states = [state for _, state in replay(load(OUT / "debug-arguments.jsonl"))]
    edited = json.dumps({"command": EDITED_COMMAND}, ensure_ascii=False)
    at_edit = next(i for i, st in enumerate(states) if any(e["type"] == "debug/edit" for e in st["events"]))
    before, after = states[at_edit - 1]["tools"]["c1"], states[at_edit]["tools"]["c1"]
    assert json.loads(before["arguments"]) == {"command": "node test/run.mjs"}
    assert json.loads(after["arguments"]) == {"command": EDITED_COMMAND}
    asked = [st for st in states[at_edit:] if "c1" in st["approvals"]]
    assert asked and all(json.loads(st["tools"]["c1"]["arguments"])["command"] == EDITED_COMMAND for st in asked)
    assert json.loads(states[-1]["tools"]["c1"]["arguments"]) == json.loads(edited)
