"""Adapters and saved logs at the host's edges: one adapter per session model, closed at shutdown;
a saved session is described and followed by the read-only controller with every field."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dsh_notebook.config import Settings
from dsh_notebook.models.base import ModelAdapter
from dsh_notebook.testing.models import FunctionModel
from dsh_notebook.wire.endpoints import SessionInfo
from tests.host.support import RawConn, make_host

built: list[FunctionModel] = []


def counted_factory(settings: Settings, model_id: str, base_url: str | None) -> ModelAdapter:
    """A model that says one word; ``built`` records each one (its ``closed`` says if it was closed)."""
    built.append(FunctionModel(lambda _request: "ok", provider="counted"))
    return built[-1]


def _run_one_turn(conn: RawConn, cwd: Path) -> str:
    created = conn.call("session/create", {"cwd": str(cwd), "model": "counted:x", "approve": "auto"}, "c")
    sid: str = created["result"]["value"]["sessionId"]
    conn.send({"type": "open", "streamId": "f", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
    conn.send({"type": "client-request", "rpcId": "p", "method": "session/prompt",
               "payload": {"args": {"request": {"sessionId": sid, "requestId": "q", "content": "hi"}}}})
    # the reply and the turn's items interleave: read until the turn ended
    conn.until(lambda m: (m.get("value") or {}).get("type") == "event" and m["value"]["event"]["type"] == "turn/end")
    return sid


def test_the_adapter_create_builds_is_the_one_the_agent_uses_and_it_is_closed(tmp_path: Path) -> None:
    built.clear()
    host = make_host(tmp_path / "home")
    host.registry.adapter_factory = counted_factory
    try:
        _run_one_turn(RawConn(host), tmp_path)
        assert len(built) == 1 and not built[0].closed
    finally:
        host.shutdown()
    assert built[0].closed


def test_a_saved_session_is_served_read_only_with_every_info_field(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = make_host(home)
    first.registry.adapter_factory = counted_factory
    try:
        sid = _run_one_turn(RawConn(first), tmp_path)
    finally:
        first.shutdown()
    host = make_host(home)
    try:
        conn = RawConn(host)
        reply = conn.call("session/info", {"sessionId": sid}, "i")
        value: dict[str, Any] = reply["result"]["value"]
        info = SessionInfo.model_validate(value)
        required = {f.alias or n for n, f in SessionInfo.model_fields.items() if f.is_required()}
        assert required <= set(value) and "lastSeq" in required
        assert info.live is False and info.model == "counted:x" and info.cwd == str(tmp_path)
        # created with --approve auto: the log's mode/changed says so, and a saved session keeps its mode
        assert info.approve == "auto" and info.mode == "auto"
        assert info.status == "idle" and info.log_path and Path(info.log_path).is_file()
        lines = Path(info.log_path).read_text().splitlines()
        assert info.last_seq == len(lines) - 2
        conn.send({"type": "open", "streamId": "f", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        snap = conn.until(lambda m: m.get("streamId") == "f")["value"]
        assert snap["type"] == "snapshot" and snap["live"]["attached"] is False and len(snap["events"]) == len(lines) - 1
        # the tracer records the follow's invocation as it ends its first send: wait for that record
        deadline = time.monotonic() + 30
        while host.tracer.last("session/follow") is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert snap["header"]["id"] == sid and host.tracer.last("session/follow").invocation.notes["follow"] == "snapshot from the saved log"  # type: ignore[union-attr]
    finally:
        host.shutdown()


def test_call_runs_a_function_on_the_host_loop(tmp_path: Path) -> None:
    import threading

    host = make_host(tmp_path / "home")
    try:
        ran_on = host.call(threading.current_thread)
        assert ran_on is not threading.current_thread() and ran_on.name == "dsh-host"
        def sections() -> list[str]:
            return [c["name"] for c in host.call(host.context.describe)["contributions"] if c["kind"] == "section"]

        dispose = host.call(lambda: host.context.section("probe", 50, "probe text"))
        assert "probe" in sections()
        host.call(dispose)
        assert "probe" not in sections()
    finally:
        host.shutdown()
