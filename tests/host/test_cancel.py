"""Cancel mid-stream and mid-batch; closing a follow never cancels; shutdown aborts cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.host.host import Host
from dsh_notebook.session.persistence import load_log
from dsh_notebook.wire.events import (
    AssistantAttempt,
    AssistantMessageEvent,
    ToolCall,
    ToolResult,
    TurnEnd,
)

from .support import HoldModel, Models, ToolModel, events_of, make_host, wait_for


def test_cancel_mid_stream_ends_the_turn_aborted(host: Host, client: DshClient, models: Models) -> None:
    models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    handle = client.follow(sid)
    rid = client.prompt("go", sid).request_id
    handle.wait(lambda m: m.streaming_text() == "held ", timeout=20)  # a chunk arrived, stream open
    assert client.cancel(sid) is True
    outcome = handle.wait_turn_end(rid, timeout=20)
    assert outcome.reason == {"kind": "aborted", "cause": "user"}
    handle.wait(lambda m: m.status == "idle" and m.attempt is None, timeout=20)
    events = events_of(host, sid)
    partial = [e for e in events if isinstance(e, AssistantMessageEvent | AssistantAttempt)]
    assert len(partial) == 1
    if isinstance(partial[0], AssistantMessageEvent):
        assert partial[0].interrupted is True
    assert client.cancel(sid) is False  # nothing running any more
    assert not handle.closed  # the follow outlives the run
    handle.close()


@pytest.mark.integration
def test_cancel_mid_batch_answers_every_call(host: Host, client: DshClient, models: Models) -> None:
    models.fakes["tools"] = ToolModel([("bash", {"command": "sleep 30"}), ("read", {"file_path": "README.md"}), ("bash", {"command": "echo later"})])
    sid = client.create_session(model="fake:tools", approve="auto").session_id
    handle = client.follow(sid)
    rid = client.prompt("run things", sid).request_id
    handle.wait(lambda m: "t1" in m.tools and any(p["phase"] == "execute" for p in m.tools["t1"]["phases"]), timeout=20)
    client.cancel(sid)
    outcome = handle.wait_turn_end(rid, timeout=20)
    assert outcome.reason["kind"] == "aborted"
    events = events_of(host, sid)
    calls = [e.call_id for e in events if isinstance(e, ToolCall)]
    results = {e.message.tool_call_id: e for e in events if isinstance(e, ToolResult)}
    assert sorted(results) == ["t1", "t2", "t3"] and sorted(set(calls)) == ["t1", "t2", "t3"]
    assert results["t1"].error is not None and results["t1"].error.code == "CANCELLED"
    assert results["t3"].error is not None and results["t3"].error.code == "ABORTED_BEFORE_DISPATCH"
    assert isinstance(events[-1], TurnEnd) or any(isinstance(e, TurnEnd) for e in events)
    handle.close()


def test_closing_a_follow_does_not_cancel_the_run(host: Host, client: DshClient, models: Models) -> None:
    hold = models.fakes["hold"] = HoldModel()
    sid = client.create_session(model="fake:hold").session_id
    handle = client.follow(sid)
    rid = client.prompt("go", sid).request_id
    handle.wait(lambda m: m.attempt is not None, timeout=20)
    handle.close()
    wait_for(lambda: handle.closed)
    hold.release.set()
    outcome = client.wait_turn_end(sid, rid, timeout=20)
    assert outcome.completed


def test_shutdown_aborts_runs_and_flushes_logs(tmp_path: Path, models: Models) -> None:
    models.fakes["hold"] = HoldModel()
    host = make_host(tmp_path / "home", models=models)
    client = DshClient(host)
    created = client.create_session(model="fake:hold")
    handle = client.follow(created.session_id)
    client.prompt("go", created.session_id)
    handle.wait(lambda m: m.attempt is not None, timeout=20)
    host.shutdown()
    wait_for(lambda: handle.closed)  # streams ended by the host
    loaded = load_log(created.log_path or "")
    last = loaded.events[-1]
    assert isinstance(last, TurnEnd) and last.reason.kind == "aborted" and last.reason.cause == "shutdown"
    assert not loaded.torn_tail
    host.shutdown()  # idempotent
