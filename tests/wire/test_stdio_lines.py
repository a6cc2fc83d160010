"""Every line a real ``serve --stdio`` writes, and every line of the log it leaves, validates."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.wire.schema_support import problems

FIX = "run the tests; if they fail fix src/math.ts; tell me the result"


class Serve:
    """A ``serve --stdio`` child; every stdout line is kept (raw text) and parsed."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "DSH_HOME": str(home)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_notebook", "serve", "--stdio"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self.raw: list[str] = []
        self.messages: list[dict[str, Any]] = []
        self._q: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            text = line.decode("utf-8").rstrip("\n")
            self.raw.append(text)
            self._q.put(json.loads(text))

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, pred: Any, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            msg = self._q.get(timeout=max(0.01, deadline - time.monotonic()))
            self.messages.append(msg)
            if pred(msg):
                return msg

    def call(self, rpc: str, method: str, args: dict[str, Any]) -> dict[str, Any]:
        self.send({"type": "client-request", "rpcId": rpc, "method": method, "payload": {"args": args}})
        reply = self.until(lambda m: m.get("rpcId") == rpc)
        assert reply["result"]["ok"], reply
        return reply["result"]["value"]  # type: ignore[no-any-return]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        self._reader.join(timeout=10)  # every line written is now in ``raw``
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code


def _turn_ended(msg: dict[str, Any]) -> bool:
    value = msg.get("value") or {}
    return value.get("type") == "event" and value["event"]["type"] == "turn/end"


def test_a_real_stdio_session_and_its_log_validate_line_by_line(tmp_path: Path) -> None:
    srv = Serve(tmp_path / "home")
    try:
        srv.send({"type": "open", "streamId": "ctl", "endpoint": "session/control", "payload": {"args": {}}})
        created = srv.call("r1", "session/create", {"model": "script:auto"})
        sid = created["sessionId"]
        srv.send({"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        srv.call("r2", "session/prompt", {"request": {"sessionId": sid, "requestId": "q1", "mode": "queue", "content": FIX}})
        srv.until(_turn_ended, timeout=120)
        info = srv.call("r3", "session/info", {"sessionId": sid})
        assert info["live"] is True and info["status"] in ("idle", "running")
        srv.call("r4", "session/list", {})
        # a late follower gets the whole turn in its snapshot; a malformed line and a bad call
        # get coded errors (one of them unpairable: rpcId null)
        srv.send({"type": "open", "streamId": "f2", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        srv.until(lambda m: m.get("streamId") == "f2")
        srv.send("this is not json")
        srv.until(lambda m: m.get("type") == "server-response" and m["rpcId"] is None)
        srv.send({"type": "client-request", "rpcId": "r5", "method": "session/nope", "payload": {"args": {}}})
        srv.until(lambda m: m.get("rpcId") == "r5")
        srv.send({"type": "cancel", "streamId": "f2"})
        srv.until(lambda m: m.get("type") == "end" and m["streamId"] == "f2")
    finally:
        assert srv.close() == 0
    kinds = {(m["type"], (m.get("value") or {}).get("type")) for m in srv.messages}
    for expected in [("item", "snapshot"), ("item", "event"), ("item", "assistant-stream"), ("item", "tool-runtime"),
                     ("item", "status"), ("item", "baseline"), ("item", "queue"), ("server-response", None), ("end", None)]:
        assert expected in kinds, expected
    assert len(srv.raw) >= len(srv.messages) > 50
    for n, line in enumerate(srv.raw, 1):
        assert problems("ServerMessage", json.loads(line)) == [], f"stdout line {n}: {line[:300]}"
    log = Path(created["logPath"])
    lines = log.read_text().splitlines()
    assert len(lines) > 10
    for n, line in enumerate(lines, 1):
        assert problems("LogLine", json.loads(line)) == [], f"log line {n}: {line[:300]}"


def test_what_the_client_sends_validates_and_an_extra_field_does_not() -> None:
    good = [
        {"type": "client-request", "rpcId": "r1", "method": "session/create", "payload": {"args": {"model": "script:auto"}}},
        {"type": "client-request", "rpcId": "r2", "method": "session/list", "payload": {"args": {}}},
        {"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": "s_1", "cursor": 3}}},
        {"type": "cancel", "streamId": "f1"},
    ]
    for msg in good:
        assert problems("ClientMessage", msg) == [], msg
        assert problems("ClientMessage", {**msg, "colour": "red"}), msg
