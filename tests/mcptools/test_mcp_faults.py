"""Faults of real MCP servers during real turns: a crash mid-call, a hung call, a server killed
while idle, an HTTP server that goes away, servers that cannot start or hang at start,
cancellation mid-call — every call answered with a coded error, and the server restarted."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from tests.mcptools.support import (
    SDK_SERVER,
    events,
    free_port,
    make_host,
    of_type,
    run_turn,
    sdk_stdio,
    server_processes,
    start_http_server,
    wait_gone,
    write_config,
)
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply


@pytest.mark.integration
def test_a_server_that_crashes_mid_call_gives_a_coded_error_and_restarts_on_next_use(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(
        tool_call_reply([("c1", "t__pid", "{}")]),
        tool_call_reply([("c2", "t__crash", "{}")]),
        tool_call_reply([("c3", "t__pid", "{}")]),
        text_reply("done"),
    )
    host = make_host(home)
    try:
        outcome = run_turn(host, fake, tmp_path)
        results = {r["message"]["toolCallId"]: r for r in of_type(events(outcome.log_path), "tool/result")}
        assert results["c2"]["error"]["code"] == "MCP_SERVER_DIED"
        assert "starts again on its next use" in results["c2"]["message"]["content"][0]["text"]
        pid_before = results["c1"]["message"]["content"][0]["text"]
        pid_after = results["c3"]["message"]["content"][0]["text"]
        assert pid_before.isdigit() and pid_after.isdigit() and pid_before != pid_after
        assert "error" not in results["c3"]
        assert host.mcp.servers["t"].starts == 2
        assert outcome.reason["kind"] == "completed"
    finally:
        host.shutdown()
    assert wait_gone(str(SDK_SERVER)) == []


@pytest.mark.integration
def test_a_hung_server_times_out_with_a_coded_error_is_stopped_and_restarts(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio(timeout=1)})
    fake.enqueue(
        tool_call_reply([("c1", "t__sleep", json.dumps({"seconds": 600}))]),
        tool_call_reply([("c2", "t__echo", json.dumps({"text": "back"}))]),
        text_reply("done"),
    )
    host = make_host(home)
    try:
        outcome = run_turn(host, fake, tmp_path)
        results = {r["message"]["toolCallId"]: r for r in of_type(events(outcome.log_path), "tool/result")}
        assert results["c1"]["error"]["code"] == "MCP_TIMEOUT"
        assert results["c2"]["message"]["content"][0]["text"] == "echo: back"
        assert host.mcp.servers["t"].starts == 2
        assert len(server_processes(str(SDK_SERVER))) == 1  # the hung one was stopped
    finally:
        host.shutdown()
    assert wait_gone(str(SDK_SERVER)) == []


@pytest.mark.integration
def test_servers_start_lazily_and_a_server_killed_while_idle_restarts_transparently(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    host = make_host(home)
    try:
        assert host.mcp.servers["t"].status == "not started" and server_processes(str(SDK_SERVER)) == []
        fake.enqueue(tool_call_reply([("c1", "t__pid", "{}")]), text_reply("one"))
        first = run_turn(host, fake, tmp_path)
        (proc,) = server_processes(str(SDK_SERVER))
        proc.kill()
        deadline = time.monotonic() + 20
        while host.mcp.servers["t"].status != "failed" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert host.mcp.describe()["servers"][0]["status"].startswith("failed: the server closed its connection")
        fake.enqueue(tool_call_reply([("c2", "t__pid", "{}")]), text_reply("two"))
        second = run_turn(host, fake, tmp_path, session=first.session_id)
        results = {r["message"]["toolCallId"]: r for r in of_type(events(second.log_path), "tool/result")}
        assert "error" not in results["c2"]
        assert results["c2"]["message"]["content"][0]["text"] != results["c1"]["message"]["content"][0]["text"]
        assert results["c2"]["message"]["content"][0]["text"] == str(server_processes(str(SDK_SERVER))[0].pid)
    finally:
        host.shutdown()
    assert wait_gone(str(SDK_SERVER)) == []


def wait_file(path: Path, timeout: float = 60) -> None:
    """Until the SDK server's ``sleep`` tool wrote ``path`` (a call reached it)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"no call reached the server ({path} never written)"
        time.sleep(0.01)


@pytest.mark.integration
def test_cancelling_a_turn_mid_call_answers_the_call_and_the_server_stays_usable(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    sleeping = tmp_path / "sleeping"
    write_config(home, {"t": sdk_stdio(env={"SDK_SERVER_SLEEPING": str(sleeping)})})
    fake.enqueue(tool_call_reply([("c1", "t__sleep", json.dumps({"seconds": 600}))]))
    host = make_host(home)
    try:
        with DshClient(host) as client:
            sid = client.create_session(cwd=str(tmp_path), model="fake-model", base_url=fake.base_url,
                                        approve="auto").session_id
            handle = client.follow(sid)
            try:
                rid = client.prompt("sleep", sid).request_id
                wait_file(sleeping)  # the call is on the server now
                assert client.cancel(sid)
                outcome = handle.wait_turn_end(rid, timeout=60)
            finally:
                handle.close()
            assert outcome.reason["kind"] == "aborted"
            log_path = client.info(sid).log_path
            result = of_type(events(log_path), "tool/result")[0]
            assert result["message"]["toolCallId"] == "c1" and result["message"]["isError"] is True
            assert host.mcp.servers["t"].status == "running"
            fake.enqueue(tool_call_reply([("c2", "t__echo", json.dumps({"text": "still here"}))]), text_reply("ok"))
            again = run_turn(host, fake, tmp_path, session=sid)
        assert of_type(events(again.log_path), "tool/result")[-1]["message"]["content"][0]["text"] == "echo: still here"
        assert host.mcp.servers["t"].starts == 1
    finally:
        host.shutdown()


@pytest.mark.integration
def test_a_server_that_cannot_start_leaves_the_turn_working_and_says_why(tmp_path: Path, fake: FakeOpenAIServer) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio(), "gone": {"command": str(tmp_path / "missing-binary")},
                        "off": sdk_stdio(disabled=True),
                        "crashy": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('boom: no config\\n'); sys.exit(4)"]}})
    fake.enqueue(text_reply("fine"))
    host = make_host(home)
    try:
        outcome = run_turn(host, fake, tmp_path)
        status = {s["name"]: s["status"] for s in host.mcp.describe()["servers"]}
        offered = {t["function"]["name"] for t in list(fake.requests)[0].body["tools"]}
    finally:
        host.shutdown()
    assert outcome.reason["kind"] == "completed"
    assert status["t"] == "running" and "t__echo" in offered
    assert status["gone"] == f"failed: cannot start: command not found ({tmp_path / 'missing-binary'})"
    assert status["crashy"].startswith("failed: ") and "boom: no config" in status["crashy"]
    assert status["off"] == "disabled"
    assert not any(name.startswith(("gone__", "crashy__", "off__")) for name in offered)


@pytest.mark.integration
def test_a_server_that_hangs_at_start_fails_with_a_reason_and_is_not_left_running(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    marker = str(tmp_path / "silent-server")
    home = tmp_path / "home"
    write_config(home, {"mute": {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)", marker],
                                 "startTimeout": 1}})
    fake.enqueue(text_reply("fine"))
    host = make_host(home)
    try:
        outcome = run_turn(host, fake, tmp_path)
        status = host.mcp.describe()["servers"][0]["status"]
    finally:
        host.shutdown()
    assert outcome.reason["kind"] == "completed"
    assert status == "failed: did not answer initialize / tools/list within 1 s"
    assert wait_gone(marker) == []


def test_an_http_server_that_dies_mid_call_is_reached_again_once_it_is_back(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    port = free_port()
    sleeping = tmp_path / "sleeping"
    proc = start_http_server(port, sleeping=sleeping)
    home = tmp_path / "home"
    write_config(home, {"web": {"url": f"http://127.0.0.1:{port}/mcp"}})
    fake.enqueue(tool_call_reply([("c1", "web__sleep", json.dumps({"seconds": 600}))]), text_reply("one"))
    host = make_host(home)
    try:
        with DshClient(host) as client:
            sid = client.create_session(cwd=str(tmp_path), model="fake-model", base_url=fake.base_url,
                                        approve="auto").session_id
            handle = client.follow(sid)
            try:
                rid = client.prompt("sleep", sid).request_id
                wait_file(sleeping)  # the call is on the server: it dies in the middle of it
                proc.kill()
                proc.wait(10)
                handle.wait_turn_end(rid, timeout=60)
            finally:
                handle.close()
            proc = start_http_server(port)  # the server is back on its URL
            fake.enqueue(tool_call_reply([("c2", "web__echo", json.dumps({"text": "back"}))]), text_reply("two"))
            again = run_turn(host, fake, tmp_path, session=sid)
        results = {r["message"]["toolCallId"]: r for r in of_type(events(again.log_path), "tool/result")}
    finally:
        host.shutdown()
        proc.terminate()
        proc.wait(10)
    assert results["c1"]["error"]["code"] == "MCP_SERVER_DIED"
    assert results["c2"]["message"]["content"][0]["text"] == "echo: back" and "error" not in results["c2"]


@pytest.mark.integration
def test_a_server_that_failed_to_start_is_tried_again_at_a_later_step(tmp_path: Path, fake: FakeOpenAIServer) -> None:
    launcher = tmp_path / "launch-server"
    home = tmp_path / "home"
    write_config(home, {"late": {"command": str(launcher)}})
    host = make_host(home)
    host.mcp.retry_after_s = 0.0  # the default waits a minute between attempts
    try:
        fake.enqueue(text_reply("no tools yet"))
        first = run_turn(host, fake, tmp_path)
        assert host.mcp.servers["late"].status == "failed"
        launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {SDK_SERVER}\n")
        launcher.chmod(0o755)
        fake.enqueue(tool_call_reply([("c1", "late__echo", json.dumps({"text": "now"}))]), text_reply("ok"))
        second = run_turn(host, fake, tmp_path, session=first.session_id)
        offered = [{t["function"]["name"] for t in r.body["tools"]} for r in fake.requests]
    finally:
        host.shutdown()
    assert "late__echo" not in offered[0] and "late__echo" in offered[1]
    assert of_type(events(second.log_path), "tool/result")[-1]["message"]["content"][0]["text"] == "echo: now"

