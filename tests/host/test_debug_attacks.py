"""``session/debug`` over a real ``serve --stdio`` driven carelessly: wrong actions and stages,
edits of the wrong target, a double continue, debugging a session that is not there, not live, or
written by another process — each a coded error, the host keeps serving, the log stays valid; and
while a run is paused, the CLI reads (``show``, ``fork``, ``compare``) its log and a second writer
is ``SESSION_BUSY``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from dsh_notebook.session.persistence import load_log
from dsh_notebook.wire.events import DebugEdit, SessionForked, ToolResult, TurnEnd
from tests.host.test_debug_stdio import REPO, SEED_000, Stdio
from tests.support.cli import dsh


def refused(srv: Stdio, method: str, **args: Any) -> dict[str, Any]:
    srv.n += 1
    rpc = f"bad_{srv.n}"
    srv.send({"type": "client-request", "rpcId": rpc, "method": method, "payload": {"args": args}})
    reply = srv.until(lambda m: m.get("type") == "server-response" and m.get("rpcId") == rpc)
    assert reply["result"]["ok"] is False, reply
    error: dict[str, Any] = reply["result"]["error"]
    return error


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*args, env=env, timeout=120)


def test_wrong_debug_calls_are_coded_and_a_continue_releases_the_pause(tmp_path: Path) -> None:
    home = tmp_path / "home"
    srv = Stdio(home)
    try:
        sid = srv.call("session/create")["sessionId"]
        srv.send({"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        for stages in (["3"], ["07"], [3], "03"):
            assert refused(srv, "session/debug", sessionId=sid, action="break", stages=stages)["code"] == "BAD_ARGS"
        assert refused(srv, "session/debug", sessionId=sid, action="break")["code"] == "BAD_ARGS"
        assert refused(srv, "session/debug", sessionId=sid, action="jump")["code"] == "BAD_ARGS"
        assert refused(srv, "session/debug", sessionId=sid, action="continue")["code"] == "NOT_PAUSED"
        missing = refused(srv, "session/debug", sessionId="s_nothere00000", action="continue")
        assert missing["code"] == "UNKNOWN_SESSION" and "live or saved" in missing["message"]
        state = srv.call("session/debug", sessionId=sid, action="break", stages=["03", "03", "04"] * 1000)
        assert state["stages"] == ["03", "04"]
        srv.call("session/prompt", request={"sessionId": sid, "requestId": "r1", "mode": "queue", "content": SEED_000})
        paused = srv.item("paused", stage="03")
        wrong = refused(srv, "session/debug", sessionId=sid, action="edit", target="result", value="x")
        assert wrong["code"] == "BAD_EDIT" and "'arguments'" in wrong["message"]
        other = refused(srv, "session/debug", sessionId=sid, action="edit", target="arguments", callId="c999",
                        value={"file_path": "README.md"})
        assert other["code"] == "BAD_EDIT" and paused["callId"] in other["message"]

        # while paused, the log is readable by the CLI and nobody else can write it
        log = home / "sessions" / f"{sid}.jsonl"
        shown = cli(home, "show", sid)
        assert shown.returncode == 0 and f"session {sid}" in shown.stdout, shown.stderr
        forked = cli(home, "fork", sid, "--at", str(paused["seq"]))
        assert forked.returncode == 0, forked.stderr
        fork_path = Path(forked.stdout.strip().split(" log: ")[1])
        assert isinstance(load_log(fork_path).events[-1], SessionForked)
        compared = cli(home, "compare", sid, str(fork_path), "--json")
        assert compared.returncode == 0 and json.loads(compared.stdout)["steps"][0]["same"], compared.stderr
        busy = cli(home, "run", "--session", sid, "hello")
        assert busy.returncode == 2 and "[SESSION_BUSY]" in busy.stderr, busy.stderr
        second = Stdio(home)
        try:
            held = refused(second, "session/debug", sessionId=sid, action="break", stages=["04"])
            assert held["code"] == "SESSION_BUSY"
        finally:
            second.close()

        # continue: the answer says the run goes on, and a second continue finds nothing paused
        went_on = srv.call("session/debug", sessionId=sid, action="continue")
        assert went_on.get("paused") is None  # was: still "paused" at the stage it had just left
        at_04 = srv.item("paused", stage="04")
        srv.call("session/debug", sessionId=sid, action="break", stages=[])  # the pause stays
        srv.call("session/debug", sessionId=sid, action="continue")
        late = refused(srv, "session/debug", sessionId=sid, action="edit", target="result", callId=at_04["callId"],
                       value="too late")
        assert late["code"] == "NOT_PAUSED"
        srv.until(lambda m: m.get("type") == "item" and (m["value"].get("event") or {}).get("type") == "turn/end")
    finally:
        srv.close()
    events = load_log(log).events
    assert not [e for e in events if isinstance(e, DebugEdit)]  # every refused edit left no event
    result = next(e for e in events if isinstance(e, ToolResult))
    assert "too late" not in result.message.text and isinstance(events[-1], TurnEnd)


def test_debug_of_a_saved_session_that_is_not_live_says_how_to_go_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = cli(home, "run", SEED_000)
    assert done.returncode == 0, done.stderr
    sid = done.stdout.strip().splitlines()[-1].split()[1]
    srv = Stdio(home)
    try:
        saved = refused(srv, "session/debug", sessionId=sid, action="step")
        assert saved["code"] == "UNKNOWN_SESSION" and "resume" in saved["message"]
        state = srv.call("session/debug", sessionId=sid, action="break", stages=["06"])  # resumes it
        assert state["stages"] == ["06"]
        assert refused(srv, "session/debug", sessionId=sid, action="continue")["code"] == "NOT_PAUSED"
    finally:
        srv.close()


def test_while_an_approval_waits_its_ask_is_on_disk_and_fork_at_it_works(tmp_path: Path) -> None:
    """Before, the log held only what preceded the step (the ask was flushed after the answer):
    ``fork --at <the approval/asked seq the follow showed>`` said "not a seq" during the wait."""
    from dsh_notebook.demo import copy_demo_workspace
    from dsh_notebook.wire.events import ApprovalAsked

    home = tmp_path / "home"
    ws = copy_demo_workspace(tmp_path / "ws")  # not the demo copy: bash asks
    srv = Stdio(home)
    try:
        sid = srv.call("session/create", cwd=str(ws))["sessionId"]
        srv.send({"type": "open", "streamId": "f1", "endpoint": "session/follow", "payload": {"args": {"sessionId": sid}}})
        srv.call("session/prompt", request={"sessionId": sid, "requestId": "r1", "mode": "queue",
                                            "content": "run the tests; if they fail fix src/math.ts; tell me the result"})
        asked = srv.until(lambda m: m.get("type") == "item" and (m["value"].get("event") or {}).get("type") == "approval/asked")
        seq = asked["value"]["event"]["seq"]
        forked = cli(home, "fork", sid, "--at", str(seq))
        assert forked.returncode == 0, forked.stderr
        fork_events = load_log(Path(forked.stdout.strip().split(" log: ")[1])).events
        assert isinstance(fork_events[seq], ApprovalAsked) and isinstance(fork_events[-1], SessionForked)
        shown = cli(home, "show", sid)
        assert f"{seq:>6}" in shown.stdout and "approval/asked" in shown.stdout, shown.stdout
        srv.call("session/cancel", sessionId=sid)
    finally:
        srv.close()
