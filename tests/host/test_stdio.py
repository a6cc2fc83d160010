"""``python -m dsh_notebook serve --stdio`` in a real subprocess: fuzzing and a conversation."""

from __future__ import annotations

import json
import queue
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.client.connection import Connection
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.client.transport import StdioTransport
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.events import UserMessageEvent

from .support import KNOWN_CODES, wait_for

FIX = "run the tests; if they fail fix src/math.ts; tell me the result"


class Server:
    """A serve --stdio child with a raw line interface."""

    def __init__(self) -> None:
        self.lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.transport = StdioTransport([sys.executable, "-m", "dsh_notebook", "serve", "--stdio"])
        self.transport.start(self.lines.put)

    def replies(self, n: int, timeout: float = 30.0) -> list[dict[str, Any]]:
        return [json.loads(self.lines.get(timeout=timeout)) for _ in range(n)]


@pytest.fixture(scope="module")
def server() -> Any:
    srv = Server()
    yield srv
    assert srv.transport.close() == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.integration
@given(raw=st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip()),
    st.text(max_size=40).filter(lambda t: "\n" not in t and "\r" not in t and t.strip() and "\u2028" not in t).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.dictionaries(st.sampled_from(["type", "rpcId", "method", "payload"]), st.integers() | st.text(max_size=5), max_size=4).map(lambda d: json.dumps(d).encode()),
))
def test_malformed_lines_never_kill_the_server(server: Server, raw: bytes) -> None:
    server.transport.send_raw(raw + b"\n")
    server.transport.send_raw(b'{"type":"client-request","rpcId":"alive","method":"session/list","payload":{"args":{}}}\n')
    first, second = server.replies(2)
    if first.get("rpcId") == "alive":  # a line that was valid JSON but not for us, answered after
        first, second = second, first
    assert first["type"] in ("server-response", "error")
    error = first["result"]["error"] if first["type"] == "server-response" else first["error"]
    assert error["code"] in KNOWN_CODES
    assert second["rpcId"] == "alive" and second["result"]["ok"] is True


@pytest.mark.integration
def test_a_scripted_conversation_over_stdio(monkeypatch: pytest.MonkeyPatch) -> None:
    # the classroom pace: a steer and a cancel are sent while a scripted turn is still streaming
    monkeypatch.setenv("DSH_SCRIPT_PACE", "0.02")
    transport = StdioTransport()
    client = DshClient(transport=transport)
    try:
        created = client.create_session()
        sid = created.session_id
        assert created.model == "script:auto" and created.approve == "auto"
        handle = client.follow(sid)
        first = client.prompt(FIX, sid, request_id="req_1")
        assert first.accepted
        outcome = handle.wait_turn_end("req_1", timeout=60)
        assert outcome.completed and "tests pass" in outcome.final_answer

        # steer: sent while the next turn runs, it rides along with that turn
        client.prompt("summarize the README", sid, request_id="req_2")
        handle.wait(lambda m: m.status == "running" and m.turn == 2, timeout=30)
        client.prompt("and keep it short", sid, mode="steer", request_id="req_3")
        steered = handle.wait_turn_end("req_3", timeout=60)
        assert steered.turn == 2 and steered.completed

        # cancel mid-run: the turn ends aborted; the follow stays open
        client.prompt(FIX, sid, request_id="req_4")
        handle.wait(lambda m: m.turn == 3 and m.attempt is not None, timeout=30)
        assert client.cancel(sid) is True
        aborted = handle.wait_turn_end("req_4", timeout=30)
        assert aborted.reason == {"kind": "aborted", "cause": "user"}
        assert not handle.closed

        sessions = client.list_sessions()
        assert [s.session_id for s in sessions] == [sid] and sessions[0].live
        # the wire: every response paired with its request's rpcId, envelopes exactly per DESIGN §6
        conn: Connection = client.connection
        for ex in conn.exchanges:
            assert ex.request["type"] == "client-request" and set(ex.request) == {"type", "rpcId", "method", "payload"}
            assert ex.response is not None and ex.response["rpcId"] == ex.request["rpcId"]
            assert set(ex.response) == {"type", "rpcId", "result"} and ex.response["type"] == "server-response"
        prompt_ex = [ex for ex in conn.exchanges if ex.request["method"] == "session/prompt"][0]
        assert prompt_ex.request["payload"]["args"]["request"]["requestId"] == "req_1"
        assert prompt_ex.response["result"] == {"ok": True, "value": {"accepted": True}}  # type: ignore[index]
        users = [dump(e) for e in handle.model.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"]
        assert [u["message"]["source"]["requestId"] for u in users] == ["req_1", "req_2", "req_3", "req_4"]
        assert all(u["message"]["source"]["rpcId"].startswith("rpc_") for u in users)
        handle.close()
        wait_for(lambda: handle.closed)
    finally:
        client.close()
    assert transport.process is not None and transport.process.returncode == 0
