"""Full turns on real MCP servers: the loopback OpenAI-compatible server scripts a call to
``NAME__TOOL``, the tool runs on a real server (the SDK test server over stdio and streamable
HTTP), and its result is in the next request; results, validation, approvals, progress.
Faults (crash, hang, restart) are in test_mcp_faults.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.client.dsh_client import DshClient
from tests.mcptools.support import (
    SDK_SERVER,
    events,
    http_server,
    last_tool_message,
    make_host,
    of_type,
    one_turn,
    run_turn,
    sdk_stdio,
    server_processes,
    wait_gone,
    write_config,
)
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply


@pytest.mark.integration
def test_a_configured_stdio_tool_is_offered_runs_and_its_result_reaches_the_next_request(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(tool_call_reply([("c1", "t__echo", json.dumps({"text": "hi there"}))]), text_reply("done"))
    host = make_host(home)
    try:
        outcome = run_turn(host, fake, tmp_path)
        first, second = list(fake.requests)
        offered = {t["function"]["name"]: t["function"] for t in first.body["tools"]}
        assert {"t__echo", "t__add", "t__peek", "read", "bash"} <= set(offered)
        assert offered["t__echo"]["parameters"]["required"] == ["text"]  # the server's own schema
        assert last_tool_message(second)["content"] == "echo: hi there"
        assert outcome.reason["kind"] == "completed"
        evs = events(outcome.log_path)
        call = of_type(evs, "tool/call")[0]
        assert (call["name"], call["server"], call["tool"]) == ("t__echo", "t", "echo")
        header_tools = {t["name"]: t for t in of_type(evs, "request/header")[0]["tools"]}
        assert header_tools["t__echo"]["server"] == "t" and header_tools["t__echo"]["tool"] == "echo"
        assert "server" not in header_tools["read"]
        assert len(server_processes(str(SDK_SERVER))) == 1
    finally:
        host.shutdown()
    assert wait_gone(str(SDK_SERVER)) == []  # host shutdown stopped the server: no orphans


def test_streamable_http_server_structured_and_image_results(tmp_path: Path, fake: FakeOpenAIServer) -> None:
    home = tmp_path / "home"
    with http_server() as url:
        write_config(home, {"web": {"url": url}})
        fake.enqueue(
            tool_call_reply([("c1", "web__add", json.dumps({"a": 2, "b": 40})), ("c2", "web__picture", "{}")]),
            text_reply("done"),
        )
        outcome = one_turn(home, fake, tmp_path)
    second = list(fake.requests)[1]
    tools = {m["tool_call_id"]: m["content"] for m in second.messages if m["role"] == "tool"}
    assert json.loads(tools["c1"]) == {"sum": 42}
    assert tools["c2"].startswith("[image: image/png, about") and "base64" not in tools["c2"]
    assert outcome.reason["kind"] == "completed"


@pytest.mark.integration
def test_invalid_arguments_are_refused_by_the_servers_schema_before_the_server_runs(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(tool_call_reply([("c1", "t__add", json.dumps({"a": "two"}))]), text_reply("ok"))
    outcome = one_turn(home, fake, tmp_path)
    result = of_type(events(outcome.log_path), "tool/result")[0]
    assert result["error"]["code"] == "INVALID_ARGS"
    text = result["message"]["content"][0]["text"]
    assert "'b' is a required property" in text and "a: 'two' is not of type 'integer'" in text


@pytest.mark.integration
def test_approval_asks_by_default_and_a_denial_is_answered(tmp_path: Path, fake: FakeOpenAIServer) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(tool_call_reply([("c1", "t__echo", json.dumps({"text": "x"}))]), text_reply("ok"))
    host = make_host(home)
    try:
        with DshClient(host) as client:
            sid = client.create_session(cwd=str(tmp_path), model="fake-model", base_url=fake.base_url,
                                        approve="ask").session_id

            handle = client.follow(sid)
            try:
                rid = client.prompt("go", sid).request_id
                handle.wait(lambda m: "c1" in m.approvals, timeout=60)
                client.approve(sid, "c1", "deny")
                handle.wait_turn_end(rid, timeout=60)
            finally:
                handle.close()
            log_path = client.info(sid).log_path
    finally:
        host.shutdown()
    evs = events(log_path)
    assert of_type(evs, "approval/asked")[0]["name"] == "t__echo"
    assert of_type(evs, "approval/decided")[0]["decision"] == "deny"
    result = of_type(evs, "tool/result")[0]
    assert result["error"]["code"] == "DENIED"


@pytest.mark.integration
def test_read_only_tools_run_without_asking_only_when_trusted(tmp_path: Path, fake: FakeOpenAIServer) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(tool_call_reply([("c1", "t__peek", "{}")]), text_reply("ok"))
    host = make_host(home, mcp_trust_readonly=True)
    try:
        outcome = run_turn(host, fake, tmp_path, approve="ask")  # nobody answers: an ask would hang
        tools = {t.name: t for t in host.mcp.context.scope().tools()}
        assert tools["t__peek"].approval == "allow" and tools["t__echo"].approval == "ask"
    finally:
        host.shutdown()
    evs = events(outcome.log_path)
    assert of_type(evs, "approval/asked") == []
    assert of_type(evs, "tool/result")[0]["message"]["content"][0]["text"] == "note greeting: hello"


def test_the_core_imports_and_runs_without_the_mcp_package(tmp_path: Path) -> None:
    """``mcp`` is an extra: without it the host runs; a configured server fails with a clear reason."""
    write_config(tmp_path, {"t": sdk_stdio()})
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from dsh_notebook.config import Settings\n"
        "from dsh_notebook.launcher import new_host\n"
        "from dsh_notebook.client.dsh_client import DshClient\n"
        f"h = new_host(Settings(home={str(tmp_path)!r}))\n"
        "out = DshClient(h).run('hello', model='script:auto')\n"
        "print(out.reason['kind'], h.mcp.describe()['servers'][0]['status'])\n"
        "h.shutdown()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "completed failed: the 'mcp' package is not installed: pip install 'dsh-notebook[mcp]'"


@pytest.mark.integration
def test_progress_notifications_are_live_frames_and_list_changed_adds_the_new_tool(
    tmp_path: Path, fake: FakeOpenAIServer
) -> None:
    home = tmp_path / "home"
    write_config(home, {"t": sdk_stdio()})
    fake.enqueue(
        tool_call_reply([("c1", "t__work", "{}")]),
        tool_call_reply([("c2", "t__grow", "{}")]),
        text_reply("grown"),
    )
    fake.enqueue(tool_call_reply([("c3", "t__late", "{}")]), text_reply("late too"))
    host = make_host(home)
    frames: list[dict[str, Any]] = []
    try:
        with DshClient(host) as client:
            first = client.run("work", model="fake-model", base_url=fake.base_url, cwd=str(tmp_path),
                               approve="auto", timeout=90,
                               on_frame=lambda f, _model: frames.append(f) if isinstance(f, dict) else None)
            second = client.run("late", first.session_id, timeout=90)
        requests = list(fake.requests)
    finally:
        host.shutdown()
    progress = [f["frame"]["detail"] for f in frames
                if f.get("type") == "tool-runtime" and f["frame"]["phase"] == "progress" and f["frame"]["callId"] == "c1"]
    assert progress == ["1/3 step 1", "2/3 step 2", "3/3 step 3"]
    offered_first = {t["function"]["name"] for t in requests[0].body["tools"]}
    offered_later = {t["function"]["name"] for t in requests[3].body["tools"]}
    assert "t__late" not in offered_first and "t__late" in offered_later
    result = of_type(events(second.log_path), "tool/result")[-1]
    assert result["message"]["content"][0]["text"] == "late ok"
