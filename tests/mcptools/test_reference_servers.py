"""The npm reference servers (``@modelcontextprotocol/server-filesystem``, ``server-everything``,
installed into tests/mcptools/node_modules by ``make setup``) driven through full turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from tests.mcptools.support import (
    events,
    make_host,
    node_server,
    of_type,
    server_processes,
    wait_gone,
    write_config,
)
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

FS = node_server("mcp-server-filesystem")
EVERYTHING = node_server("mcp-server-everything")
needs_npm = pytest.mark.skipif(FS is None or EVERYTHING is None,
                               reason="npm reference servers not installed (cd tests/mcptools && npm install)")


@pytest.mark.integration
@needs_npm
def test_filesystem_server_reads_a_file_and_the_content_reaches_the_next_request(tmp_path: Path) -> None:
    root = (tmp_path / "shared").resolve()
    root.mkdir()
    (root / "notes.txt").write_text("the answer is 42\n")
    home = tmp_path / "home"
    write_config(home, {"fs": {"command": FS, "args": [str(root)]}})
    host = make_host(home, mcp_trust_readonly=True)
    try:
        with FakeOpenAIServer() as fake, DshClient(host) as client:
            fake.enqueue(
                tool_call_reply([("c1", "fs__read_text_file", json.dumps({"path": str(root / "notes.txt")})),
                                 ("c2", "fs__write_file", json.dumps({"path": str(root / "x.txt"), "content": "no"}))]),
                text_reply("it says 42"),
            )
            outcome = client.run("what do the notes say?", model="fake-model", base_url=fake.base_url,
                                 cwd=str(tmp_path), approve="deny", timeout=90)
            requests = list(fake.requests)
        offered = {t["function"]["name"] for t in requests[0].body["tools"]}
        assert {"fs__read_text_file", "fs__write_file", "fs__list_directory"} <= offered
        tools = {m["tool_call_id"]: m["content"] for m in requests[1].messages if m["role"] == "tool"}
        assert "the answer is 42" in tools["c1"]  # read-only + trusted: ran without approval
        assert "permission denied" in tools["c2"] and not (root / "x.txt").exists()  # asks → deny mode
        calls = of_type(events(outcome.log_path), "tool/call")
        assert [(c["server"], c["tool"]) for c in calls] == [("fs", "read_text_file"), ("fs", "write_file")]
        assert outcome.reason["kind"] == "completed"
        assert len(server_processes("mcp-server-filesystem")) == 1  # the check below sees it while alive
    finally:
        host.shutdown()
    assert wait_gone("mcp-server-filesystem") == []


@pytest.mark.integration
@needs_npm
def test_everything_server_echo_sum_image_and_a_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_API_KEY", FakeOpenAIServer.api_key or "")
    home = tmp_path / "home"
    write_config(home, {"everything": {"command": EVERYTHING, "args": [], "env": {"TEST_SERVER_SETTING": "on"}}})
    host = make_host(home)
    try:
        with FakeOpenAIServer() as fake, DshClient(host) as client:
            fake.enqueue(
                tool_call_reply([("c1", "everything__echo", json.dumps({"message": "ping"})),
                                 ("c2", "everything__get-sum", json.dumps({"a": 2, "b": 3})),
                                 ("c3", "everything__get-tiny-image", "{}"),
                                 ("c4", "everything__get-env", "{}")]),
                text_reply("done"),
            )
            outcome = client.run("try the tools", model="fake-model", base_url=fake.base_url, cwd=str(tmp_path),
                                 approve="auto", timeout=90)
            second = list(fake.requests)[1]
        tools = {m["tool_call_id"]: m["content"] for m in second.messages if m["role"] == "tool"}
        assert "ping" in tools["c1"]
        assert "5" in tools["c2"]
        assert "[image: image/png" in tools["c3"] and len(tools["c3"]) < 2_000  # no base64 for the model
        assert "PATH" in tools["c4"] and "TEST_SERVER_SETTING" in tools["c4"]  # its env: minimal + its own
        assert (fake.api_key or "") not in tools["c4"] and "DSH_API_KEY" not in tools["c4"]  # no keys
        assert outcome.reason["kind"] == "completed"
    finally:
        host.shutdown()
    assert wait_gone("mcp-server-everything") == []
