"""A large batch (the snapshot of a long saved session) travels as binary buffers of the custom
message, through the real WidgetBridge, Host and read-only controller: the items name their
buffers by index, each buffer is the UTF-8 of one envelope's JSON, and small batches stay inline."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from dsh_notebook.host.host import Host
from dsh_notebook.launcher import process_host
from dsh_notebook.notebook.widgets.comm_transport import BUFFER_MIN, WidgetBridge
from dsh_notebook.session.saved import read_saved
from tests.benchmarks._widget_logs import write_log


def follow_once(path: Path, host: Host) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], list[bytes]]]]:
    saved = read_saved(path)
    inline: list[dict[str, Any]] = []
    buffered: list[tuple[dict[str, Any], list[bytes]]] = []
    got = threading.Event()

    def send(msg: dict[str, Any]) -> None:
        inline.append(msg)
        got.set()

    def send_buffers(msg: dict[str, Any], buffers: list[bytes]) -> None:
        buffered.append((msg, buffers))
        got.set()

    bridge = WidgetBridge(send, lambda s: host.connect_saved(s, saved, caller="test"), interval=0, send_buffers=send_buffers)
    bridge.handle({"kind": "envelope", "cid": "v1", "envelope": {
        "type": "open", "streamId": "st1", "endpoint": "session/follow", "payload": {"args": {"sessionId": saved.session_id}}}})
    assert got.wait(30), "no batch"
    snapshot_batches = (list(inline), list(buffered))
    bridge.close()  # (ends the stream: an "end" frame follows, inline)
    return snapshot_batches


def test_a_long_snapshot_rides_in_buffers_and_a_short_one_inline(tmp_path: Path) -> None:
    host = process_host()
    big = write_log(tmp_path / "big.jsonl", 3000, chained=True)
    assert big.stat().st_size > BUFFER_MIN
    inline, buffered = follow_once(big, host)
    assert inline == [] and len(buffered) == 1
    msg, buffers = buffered[0]
    assert msg["kind"] == "batch" and msg["cid"] == "v1" and msg["items"] == [0] and len(buffers) == 1
    env = json.loads(buffers[0].decode("utf-8"))
    assert env["type"] == "item" and env["streamId"] == "st1" and env["value"]["type"] == "snapshot"
    assert len(env["value"]["events"]) == 3000 and env["value"]["cursor"] == 2999
    small = write_log(tmp_path / "small.jsonl", 100)
    inline, buffered = follow_once(small, host)
    assert buffered == [] and len(inline) == 1
    env = json.loads(inline[0]["items"][0])
    assert env["value"]["type"] == "snapshot" and len(env["value"]["events"]) == 100
