"""``python -m dsh_notebook mcp list|add|remove`` in real subprocesses on real servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.mcptools.support import SDK_SERVER, write_config
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh("mcp", *args, env=env, timeout=120)


def test_list_shows_status_and_tools_and_failures_with_reasons(tmp_path: Path) -> None:
    write_config(tmp_path, {
        "t": {"command": sys.executable, "args": [str(SDK_SERVER)]},
        "gone": {"command": str(tmp_path / "no-such-server")},
        "broken": {"url": "nope"},
    })
    done = _cli(tmp_path, "list")
    assert done.returncode == 1, done.stderr  # some server failed
    out = done.stdout
    assert "t  [stdio]" in out and "— running · 11 tools" in out
    assert "      t__echo\n" in out and "t__weird_name_v2  (server's name: weird.name/v2)" in out
    assert "gone  [stdio]" in out and "failed: cannot start: command not found" in out
    assert "broken" in out and "failed: MCP server 'broken': 'url' must be an http(s) URL" in out
    assert "Traceback" not in done.stdout + done.stderr
    as_json = json.loads(_cli(tmp_path, "list", "--json").stdout)
    status = {s["name"]: s["status"] for s in as_json["servers"]}
    assert status["t"] == "running" and status["gone"].startswith("failed: ")
    not_started = json.loads(_cli(tmp_path, "list", "--json", "--no-start").stdout)
    assert {s["name"]: s["status"] for s in not_started["servers"]}["t"] == "not started"


def test_add_then_remove_and_a_broken_file_is_a_coded_error(tmp_path: Path) -> None:
    added = _cli(tmp_path, "add", "t", "--", sys.executable, str(SDK_SERVER))
    assert added.returncode == 0, added.stderr
    assert "added MCP server 't'" in added.stdout and "t__echo" in added.stdout
    assert _cli(tmp_path, "remove", "t").returncode == 0
    assert json.loads((tmp_path / "mcp.json").read_text())["mcpServers"] == {}
    bad = _cli(tmp_path, "add", "u", "--url", "ftp://x")
    assert bad.returncode == 2 and "[MCP_CONFIG]" in bad.stderr and "'u'" in bad.stderr
    (tmp_path / "mcp.json").write_text("{oops")
    listed = _cli(tmp_path, "list")
    assert listed.returncode == 1 and "error [MCP_CONFIG]" in listed.stdout and "not valid JSON" in listed.stdout
    assert "Traceback" not in listed.stdout + listed.stderr


def test_run_offers_the_configured_tool_runs_it_and_leaves_no_server_process(tmp_path: Path) -> None:
    """The issue's check from outside: `run` with a server in mcp.json; NAME__TOOL is offered,
    runs on the server, its result is in the next request; the server ends with the CLI."""
    import psutil

    from tests.support.fake_openai import FakeOpenAIServer
    from tests.support.fake_openai_chunks import text_reply, tool_call_reply

    marker = str(tmp_path / "marker")  # an extra argument that names this test's server process
    home = tmp_path / "home"
    write_config(home, {"calc": {"command": sys.executable, "args": [str(SDK_SERVER), marker]}})
    with FakeOpenAIServer() as fake:
        fake.enqueue(tool_call_reply([("c1", "calc__add", json.dumps({"a": 20, "b": 22}))]), text_reply("42"))
        env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": fake.api_key or ""}
        done = dsh("run", "--model", "fake-model", "--base-url", fake.base_url, "--cwd", str(tmp_path), "--approve", "auto", "add 20 and 22", env=env, timeout=120)
        first, second = list(fake.requests)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "42"
    assert "calc__add" in {t["function"]["name"] for t in first.body["tools"]}
    tool_msg = [m for m in second.messages if m["role"] == "tool"][0]
    assert tool_msg["tool_call_id"] == "c1" and json.loads(tool_msg["content"]) == {"sum": 42}
    left = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in (proc.info["cmdline"] or []):
            left.append(proc)
    assert left == []
