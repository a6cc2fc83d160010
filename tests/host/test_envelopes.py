"""The connection handler: every malformed message gets a coded error and the host keeps serving."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.host.contract import DESCRIPTORS, Descriptor
from dsh_notebook.host.envelopes import EnvelopeError, parse_envelope
from dsh_notebook.host.host import Host
from dsh_notebook.wire.endpoints import NoArgs, SessionList

from .support import KNOWN_CODES, RawConn

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
keys = st.sampled_from(["type", "rpcId", "method", "payload", "streamId", "endpoint", "args", "x"])
types = st.sampled_from(["client-request", "open", "cancel", "server-response", "item", "", "Open"])
methods = st.sampled_from([*DESCRIPTORS, "session/nope", "", "session/", "/"])
envelope_like = st.fixed_dictionaries(
    {"type": types},
    optional={
        "rpcId": st.one_of(st.text(max_size=6), st.integers(), st.none()),
        "method": st.one_of(methods, json_values),
        "endpoint": st.one_of(methods, json_values),
        "streamId": st.one_of(st.text(max_size=6), st.integers()),
        "payload": st.one_of(json_values, st.fixed_dictionaries({"args": json_values})),
    },
).map(lambda d: {**d, "method": d["method"]} if "method" in d else d)
lines = st.one_of(
    st.text(max_size=60),
    json_values.map(json.dumps),
    st.dictionaries(keys, json_values, max_size=5).map(json.dumps),
    envelope_like.map(json.dumps),
    st.sampled_from(["", "{", "NaN", '{"type":"client-request","rpcId":"a","method":"session/list","x":NaN}', "\ud800x"]),
)


MARK = "after-the-line"  # an rpcId longer than any the lines above carry


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=lines)
def test_any_line_gets_a_coded_reply_and_the_host_keeps_serving(host: Host, line: str) -> None:
    conn = RawConn(host)
    if not line.strip():
        line = line + "x"  # the raw handler answers blank text too (stdio skips blank lines)
    conn.send(line)
    replies = [conn.next(10)]  # every line is answered: then a request behind it marks the end of
    conn.send({"type": "client-request", "rpcId": MARK, "method": "session/list", "payload": {"args": {}}})
    while (reply := conn.next(10)).get("rpcId") != MARK:  # what it sent (no wait for silence)
        replies.append(reply)
    assert reply["type"] == "server-response" and reply["result"]["ok"] is True  # it keeps serving
    for reply in replies:
        assert reply["type"] in ("server-response", "item", "error", "end")
        if reply["type"] == "server-response" and not reply["result"]["ok"]:
            assert reply["result"]["error"]["code"] in KNOWN_CODES | {"CANCELLED", "BAD_CWD", "BAD_MODEL", "UNKNOWN_PROVIDER", "UNKNOWN_SCENARIO", "UNKNOWN_APPROVAL"}
            assert reply["result"]["error"]["message"]
        if reply["type"] == "error":
            assert reply["error"]["code"] in KNOWN_CODES


def test_each_envelope_rule_has_its_code(host: Host) -> None:
    conn = RawConn(host)
    cases: list[tuple[Any, str, str | None]] = [
        ("not json", "BAD_ENVELOPE", None),
        ("[1, 2]", "BAD_ENVELOPE", None),
        ('{"type":"client-request","rpcId":"a","method":"session/list","payload":{"args":{}},"x":NaN}', "BAD_ENVELOPE", None),
        ({"type": "client-request", "method": "session/list", "payload": {"args": {}}}, "BAD_ENVELOPE", None),
        ({"type": "client-request", "rpcId": "e1", "method": "session/list", "payload": {"args": {}}, "extra": 1}, "BAD_ENVELOPE", "e1"),
        ({"type": "client-request", "rpcId": "e2", "method": "session/list", "payload": []}, "BAD_ENVELOPE", "e2"),
        ({"type": "client-request", "rpcId": "e3", "method": "session/list", "payload": {"args": 3}}, "BAD_ENVELOPE", "e3"),
        ({"type": "client-request", "rpcId": "e4", "method": "session/follow", "payload": {"args": {}}}, "BAD_ENVELOPE", "e4"),
        ({"type": "server-response", "rpcId": "e5"}, "BAD_ENVELOPE", "e5"),
        ({"type": "client-request", "rpcId": "e6", "method": "session/fly", "payload": {"args": {}}}, "UNKNOWN_METHOD", "e6"),
        ({"type": "client-request", "rpcId": "e7", "method": "session/info", "payload": {"args": {}}}, "BAD_ARGS", "e7"),
        ({"type": "client-request", "rpcId": "e8", "method": "session/info", "payload": {"args": {"sessionId": "s_nope"}}}, "UNKNOWN_SESSION", "e8"),
        ({"type": "client-request", "rpcId": "e9", "method": "session/info", "payload": {"args": {"sessionId": "../../etc/passwd"}}}, "UNKNOWN_SESSION", "e9"),
    ]
    for message, code, rpc_id in cases:
        conn.send(message)
        reply = conn.next()
        assert reply["type"] == "server-response", message
        assert reply["rpcId"] == rpc_id, message
        assert reply["result"] == {"ok": False, "error": {"code": code, "message": reply["result"]["error"]["message"]}}, message


def test_stream_envelope_errors(host: Host) -> None:
    conn = RawConn(host)
    conn.send({"type": "cancel", "streamId": "nope"})
    assert conn.next() == {"type": "error", "streamId": "nope", "error": {"code": "UNKNOWN_STREAM", "message": "no open stream 'nope'"}}
    conn.send({"type": "open", "streamId": "s1", "endpoint": "session/list", "payload": {"args": {}}})
    err = conn.next()
    assert err["type"] == "error" and err["streamId"] == "s1" and err["error"]["code"] == "BAD_ENVELOPE"
    conn.send({"type": "open", "streamId": "s2", "endpoint": "session/follow", "payload": {"args": {"sessionId": "s_000000000000"}}})
    err = conn.next()
    assert err["type"] == "error" and err["error"]["code"] == "UNKNOWN_SESSION"
    conn.send({"type": "open", "streamId": "s3", "endpoint": "session/control", "payload": {}})
    item = conn.next()
    assert item == {"type": "item", "streamId": "s3", "value": {"type": "baseline", "sessions": []}}
    conn.send({"type": "open", "streamId": "s3", "endpoint": "session/control", "payload": {}})
    assert conn.next()["error"]["code"] == "BAD_ENVELOPE"
    conn.send({"type": "cancel", "streamId": "s3"})
    assert conn.next() == {"type": "end", "streamId": "s3"}


def test_parse_envelope_accepts_bare_args_for_streams() -> None:
    env = parse_envelope({"type": "open", "streamId": "f", "endpoint": "session/follow", "payload": {"sessionId": "s_1"}})
    assert env.args == {"sessionId": "s_1"}  # type: ignore[union-attr]
    env = parse_envelope({"type": "open", "streamId": "f", "endpoint": "session/follow", "payload": {"args": {"sessionId": "s_1"}}})
    assert env.args == {"sessionId": "s_1"}  # type: ignore[union-attr]
    try:
        parse_envelope({"type": "open", "streamId": "f", "endpoint": "e", "payload": {"args": {}, "more": 1}})
    except EnvelopeError as exc:
        assert exc.code == "BAD_ENVELOPE" and exc.stream_id == "f"
    else:
        raise AssertionError("mixed payload accepted")


class Broken:
    async def boom(self, args: NoArgs, inv: Any) -> SessionList:
        raise RuntimeError("secret internals sk-abcdefghijklmnop")


def test_unexpected_failure_is_internal_without_details(host: Host) -> None:
    host.gateway.descriptors["test/boom"] = Descriptor("test/boom", NoArgs, SessionList, "unary", "boom", service="broken")
    host.gateway.services["broken"] = Broken()
    conn = RawConn(host)
    reply = conn.call("test/boom", {}, rpc_id="b1")
    assert reply["result"]["ok"] is False
    assert reply["result"]["error"]["code"] == "INTERNAL"
    assert "secret" not in reply["result"]["error"]["message"]
    assert conn.call("session/list", {}, rpc_id="b2")["result"]["ok"] is True


def test_trace_records_envelope_verdict_descriptor_and_invocation(host: Host) -> None:
    conn = RawConn(host)
    conn.call("session/list", {}, rpc_id="t1")
    record = host.tracer.last("session/list")
    assert record is not None
    data = record.to_dict()
    assert data["envelope"]["rpcId"] == "t1" and data["verdict"] == "ok"
    assert data["invocation"]["serviceMethod"] == "sessionController.list"
    assert data["invocation"]["caller"] == "test"
    assert data["descriptor"]["endpoint"] == "session/list"
    assert data["reply"]["rpcId"] == "t1"


def test_a_second_call_under_an_rpc_id_in_flight_is_refused_and_the_first_is_answered(host: Host) -> None:
    conn = RawConn(host)
    call = json.dumps({"type": "client-request", "rpcId": "same", "method": "session/list", "payload": {"args": {}}})

    def both() -> None:  # two lines arriving together: the first call has not run yet
        conn.handler.handle(call)
        conn.handler.handle(call)

    host.loop.call_soon_threadsafe(both)
    replies = [conn.next(), conn.next()]
    assert [r["rpcId"] for r in replies] == ["same", "same"]
    refused = [r for r in replies if not r["result"]["ok"]]
    answered = [r for r in replies if r["result"]["ok"]]
    assert len(refused) == 1 and refused[0]["result"]["error"]["code"] == "DUPLICATE_RPC_ID"
    assert len(answered) == 1 and "sessions" in answered[0]["result"]["value"]
    again = conn.call("session/list", {}, rpc_id="same")  # answered: the id is free again
    assert again["result"]["ok"] is True
