"""Issue 21 (low, MCP): one invalid tool schema hid every tool of its server; junk on a server's
stdout printed the SDK's tracebacks; 10,000 tools took 66 s / 504 MB and all went into one
request; ``mcp list`` misreported a server's ``trustReadOnly``. A real stdio MCP server (a tiny
JSON-RPC script) and real turns on the loopback model server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.tools.mcp.manager import MAX_MCP_TOOLS
from dsh_notebook.tools.mcp.transport import MAX_TOOLS_PER_SERVER
from tests.mcptools.support import events, make_host, of_type, one_turn, run_turn, write_config
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

STUB = Path(__file__).with_name("mcp_stub_server.py")
REPO = Path(__file__).resolve().parents[2]


def stub(*flags: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(STUB), *flags], **extra}


def mcp_list(home: Path) -> tuple[dict[str, Any], str]:
    done = dsh("mcp", "list", "--json", env={**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}, timeout=120)
    return json.loads(done.stdout), done.stderr


def server(listing: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in listing["servers"] if s["name"] == name)


def test_a_tool_with_a_broken_schema_is_left_out_and_the_others_kept(tmp_path: Path) -> None:
    write_config(tmp_path, {"bad": stub("--bad-schema")})
    listing, _ = mcp_list(tmp_path)
    bad = server(listing, "bad")
    assert bad["status"] == "running"
    assert [t["tool"] for t in bad["tools"]] == ["echo", "last"]
    said = " ".join(bad["warnings"])
    assert "'broken'" in said and "'invalid'" in said and "left out" in said


@pytest.mark.integration
def test_junk_on_stdout_is_one_clear_line_and_the_server_still_answers(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    write_config(home, {"junky": stub("--junk")})
    with FakeOpenAIServer() as fake:
        fake.enqueue(tool_call_reply([("c1", "junky__echo", '{"text": "hi"}')]), text_reply("done"))
        outcome = one_turn(home, fake, tmp_path)
    result = of_type(events(outcome.log_path), "tool/result")[0]
    assert result["message"]["content"][0]["text"] == "echo: hi"
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Failed to parse JSONRPC" not in err
    said = [r for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert len(said) == 1 and said[0].exc_info is None and "\n" not in said[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info is not None]


@pytest.mark.scale
def test_ten_thousand_tools_are_capped_per_server_and_in_all(tmp_path: Path) -> None:
    home = tmp_path / "home"
    servers = {f"many{i}": stub("--tools", "10000", "--page", "1000") for i in range(3)}
    write_config(home, servers)
    with FakeOpenAIServer() as fake:
        fake.enqueue(text_reply("done"))
        host = make_host(home)
        try:
            run_turn(host, fake, tmp_path)
            listing = host.mcp.describe()
        finally:
            host.shutdown()
        sent = [t["function"]["name"] for t in fake.requests[-1].body["tools"]]
    mcp_tools = [n for n in sent if n.startswith("many")]
    assert len(mcp_tools) == MAX_MCP_TOOLS
    for entry in listing["servers"]:
        assert len(entry["tools"]) == MAX_TOOLS_PER_SERVER
        assert any(f"more than {MAX_TOOLS_PER_SERVER} tools" in w for w in entry["warnings"])
    assert sum(any("at most" in w for w in e["warnings"]) for e in listing["servers"]) >= 1


def test_mcp_list_reports_a_servers_own_trust_read_only(tmp_path: Path) -> None:
    write_config(tmp_path, {"trusted": stub(trustReadOnly=True), "plain": stub()})
    listing, _ = mcp_list(tmp_path)
    trusted, plain = server(listing, "trusted"), server(listing, "plain")
    assert trusted["trustReadOnly"] is True and plain["trustReadOnly"] is False
    assert {t["tool"]: t["approval"] for t in trusted["tools"]} == {"echo": "allow", "last": "ask"}
    assert {t["approval"] for t in plain["tools"]} == {"ask"}
