"""``session/debug`` over ``serve --stdio``, as a check from outside drives it: raw JSON lines to a
real subprocess, the scripted model on the demo workspace, the log read back from disk."""

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

from dsh_notebook.session.persistence import load_log
from dsh_notebook.session.requests import request_points
from dsh_notebook.wire.events import DebugEdit, ToolCall, ToolResult

REPO = Path(__file__).resolve().parents[2]
SEED_000 = "read README.md and summarise"


def log_path(tmp_path: Path, sid: str) -> Path:
    return tmp_path / "home" / "sessions" / f"{sid}.jsonl"


def wait_for(fn: Any, timeout: float = 20.0) -> Any:
    """Poll ``fn`` until it returns something truthy (a condition, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got or time.monotonic() > deadline:
            assert got, "the condition did not hold in time"
            return got
        time.sleep(0.05)


class Stdio:
    def __init__(self, home: Path) -> None:
        env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
        self.proc = subprocess.Popen([sys.executable, "-m", "dsh_notebook", "serve", "--stdio"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []  # every message, in order
        self.unmatched: list[dict[str, Any]] = []  # those no wait has taken yet
        threading.Thread(target=self._read, daemon=True).start()
        self.n = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, **args: Any) -> Any:
        self.n += 1
        rpc = f"rpc_{self.n}"
        self.send({"type": "client-request", "rpcId": rpc, "method": method, "payload": {"args": args}})
        reply = self.until(lambda m: m.get("type") == "server-response" and m.get("rpcId") == rpc)
        assert reply["result"]["ok"], reply
        return reply["result"]["value"]

    def until(self, match: Any, timeout: float = 60) -> dict[str, Any]:
        """The first message that matches, whenever it came: one that arrived while an earlier
        wait looked for something else (a turn/end before a call's answer) is found here too."""
        for k, msg in enumerate(self.unmatched):
            if match(msg):
                return self.unmatched.pop(k)
        while True:
            msg = self.lines.get(timeout=timeout)
            self.seen.append(msg)
            if match(msg):
                return msg
            self.unmatched.append(msg)

    def item(self, kind: str, **fields: Any) -> dict[str, Any]:
        def ok(m: dict[str, Any]) -> bool:
            v = m.get("value") or {}
            return m.get("type") == "item" and v.get("type") == kind and all(v.get(k) == x for k, x in fields.items())
        return self.until(ok)["value"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def test_break_at_04_edit_the_result_and_continue(tmp_path: Path) -> None:
    srv = Stdio(tmp_path / "home")
    try:
        sid = srv.call("session/create")["sessionId"]
        srv.send({"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        state = srv.call("session/debug", sessionId=sid, action="break", stages=["04"])
        assert state["stages"] == ["04"] and "paused" not in state
        assert srv.call("session/prompt", request={"sessionId": sid, "requestId": "req_1", "mode": "queue",
                                                   "content": SEED_000}) == {"accepted": True}
        paused = srv.item("paused")
        assert paused["stage"] == "04" and paused["editable"] == "result" and paused["callId"]
        assert "demo-math" in paused["payload"]["result"]  # the real file, not yet committed
        edited = srv.call("session/debug", sessionId=sid, action="edit", target="result",
                          callId=paused["callId"], value="MARKER-4c1e: the README says nothing")
        assert isinstance(edited["editSeq"], int) and edited["paused"]["stage"] == "04"
        # still paused, the edit is already in the file (a pause and an edit are flush points)
        on_disk = wait_for(lambda: [e for e in load_log(log_path(tmp_path, sid)).events
                                    if isinstance(e, DebugEdit) and e.seq == edited["editSeq"]])
        assert on_disk[0].after == "MARKER-4c1e: the README says nothing"
        assert not [e for e in load_log(log_path(tmp_path, sid)).events if isinstance(e, ToolResult)]
        srv.call("session/debug", sessionId=sid, action="continue")
        srv.item("resumed", stage="04", how="continue")
        srv.until(lambda m: m.get("type") == "item" and (m["value"].get("event") or {}).get("type") == "turn/end")
        srv.send({"type": "client-request", "rpcId": "bad", "method": "session/debug",
                  "payload": {"args": {"sessionId": sid, "action": "continue"}}})
        refused = srv.until(lambda m: m.get("rpcId") == "bad")
        assert refused["result"]["ok"] is False and refused["result"]["error"]["code"] == "NOT_PAUSED"
    finally:
        srv.close()
    log = load_log(tmp_path / "home" / "sessions" / f"{sid}.jsonl")
    events = log.events
    edit = next(e for e in events if isinstance(e, DebugEdit))
    call = next(e for e in events if isinstance(e, ToolCall))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert (edit.target, edit.stage, edit.after) == ("result", "04", "MARKER-4c1e: the README says nothing")
    assert "demo-math" in str(edit.before) and edit.source_event_seqs == (call.seq,)
    assert result.source_event_seqs == (call.seq, edit.seq) and result.message.text.startswith("MARKER-4c1e")
    points = request_points(events)
    after = [p for p in points if p.seq > result.seq]
    assert after, "a request followed the edited result"
    tool_msgs = [m for m in after[0].messages if m.role == "tool"]
    assert tool_msgs and tool_msgs[-1].text.startswith("MARKER-4c1e")  # type: ignore[union-attr]
