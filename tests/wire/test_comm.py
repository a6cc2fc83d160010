"""The widget comm's custom messages as a typed union in wire/ (issue 40 item 5): what the real
WidgetBridge acts on is exactly what ``read_comm`` types as an envelope or a bye, and what its
FrameBatcher sends (inline and with buffers) validates as ``CommToView``."""

from __future__ import annotations

import json

import pytest
from pydantic import JsonValue, TypeAdapter

from dsh_notebook.notebook.widgets.comm_transport import BUFFER_MIN, FrameBatcher, WidgetBridge
from dsh_notebook.wire.comm import (
    CommBatch,
    CommBye,
    CommEnvelope,
    CommToView,
    OpenInspector,
    read_comm,
)
from dsh_notebook.wire.schema import wire_schema

REQUEST: dict[str, JsonValue] = {"type": "client-request", "rpcId": "r1", "method": "session/list"}

FROM_VIEW: list[tuple[object, type | None]] = [
    ({"kind": "envelope", "cid": "v1", "envelope": REQUEST}, CommEnvelope),
    ({"kind": "envelope", "cid": "v1", "envelope": {"type": "nonsense"}}, CommEnvelope),  # the host answers it
    ({"kind": "bye", "cid": "v1"}, CommBye),
    ({"kind": "open-inspector", "side": "a", "seq": 3}, OpenInspector),
    ({"kind": "envelope", "cid": "", "envelope": REQUEST}, None),
    ({"kind": "envelope", "envelope": REQUEST}, None),
    ({"kind": "envelope", "cid": "v1", "envelope": "text"}, None),
    ({"kind": "envelope", "cid": 7, "envelope": REQUEST}, None),
    ({"kind": "hello", "cid": "v1"}, None),
    ({"kind": "open-inspector", "side": "c", "seq": 3}, None),
    ({"kind": "open-inspector", "side": "a", "seq": -1}, None),
    ("envelope", None),
    (None, None),
]


@pytest.mark.parametrize(("content", "kind"), FROM_VIEW)
def test_read_comm_types_a_views_message_or_refuses_it(content: object, kind: type | None) -> None:
    typed = read_comm(content)
    assert (type(typed) if typed is not None else None) is kind


class Conn:
    """A host connection that records what reaches it."""

    def __init__(self) -> None:
        self.received: list[object] = []
        self.closed = False

    def receive(self, message: object) -> None:
        self.received.append(message)

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize(("content", "kind"), FROM_VIEW)
def test_the_bridge_acts_on_exactly_the_messages_read_comm_types(content: object, kind: type | None) -> None:
    """The real WidgetBridge: an envelope reaches the view's host connection, a bye closes it,
    anything else is ignored — exactly as ``read_comm`` types the message."""
    conn = Conn()
    bridge = WidgetBridge(lambda _m: None, lambda _send: conn, interval=0)
    bridge.handle({"kind": "envelope", "cid": "v1", "envelope": REQUEST})  # the view v1 is open
    conn.received.clear()
    bridge.handle(content)
    typed = read_comm(content)
    assert conn.received == ([typed.envelope] if isinstance(typed, CommEnvelope) else [])
    assert conn.closed is isinstance(typed, CommBye)
    bridge.close()


def test_what_the_batcher_sends_is_a_comm_batch() -> None:
    inline: list[dict[str, JsonValue]] = []
    buffered: list[tuple[dict[str, JsonValue], list[bytes]]] = []
    batcher = FrameBatcher(inline.append, interval=0, send_buffers=lambda m, b: buffered.append((m, b)))
    batcher.push("v1", json.dumps({"type": "server-response", "rpcId": "r1"}))
    batcher.push("v1", {"type": "end", "streamId": "st1"})
    big = json.dumps({"type": "item", "streamId": "st1", "value": "x" * BUFFER_MIN})
    batcher.push("v2", big)
    batcher.flush()
    batcher.close()
    adapter: TypeAdapter[CommToView] = TypeAdapter(CommToView)
    sent = [adapter.validate_python(m) for m in inline] + [adapter.validate_python(m) for m, _ in buffered]
    assert all(isinstance(m, CommBatch) for m in sent)
    assert [item for m in sent if m.cid == "v1" for item in m.items] == [
        json.dumps({"type": "server-response", "rpcId": "r1"}), {"type": "end", "streamId": "st1"}]
    (message, buffers), = buffered  # the large text travels as a buffer, named by its index
    assert message["cid"] == "v2" and message["items"] == [0] and buffers == [big.encode()]


def test_the_schema_and_so_the_ts_types_carry_the_comm_messages() -> None:
    defs = wire_schema()["$defs"]
    assert isinstance(defs, dict)
    for name in ("CommFromView", "CommToView", "CommEnvelope", "CommBye", "OpenInspector", "CommBatch"):
        assert name in defs, name
