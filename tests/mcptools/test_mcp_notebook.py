"""``%dsh mcp …`` in an IPython shell: add (persisted to mcp.json), list, a turn that uses the
tool through the loopback model server, remove; bad input is a coded error, not a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.magic.magics import DshMagicError
from dsh_notebook.notebook.magic.views import McpView
from tests.mcptools.support import SDK_SERVER, wait_gone
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply


@pytest.mark.integration
def test_mcp_add_list_use_and_remove_from_a_notebook(
    shell: Any, fake_server: FakeOpenAIServer, isolated_dsh_home: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = shell.run_line_magic("dsh", "mcp")
    assert isinstance(before, McpView) and "no servers configured" in repr(before)
    added = shell.run_line_magic("dsh", f"mcp add notes -- {sys.executable} {SDK_SERVER}")
    assert "added MCP server 'notes'" in repr(added) and "— running · 11 tools" in repr(added)
    assert "notes__echo" in repr(added) and "<pre class='dsh-mcp'>" in added._repr_html_()
    config = shell.run_line_magic("dsh", "config")
    assert config.items["MCP servers"].startswith(f"1 in {isolated_dsh_home / 'mcp.json'}")
    saved = json.loads((isolated_dsh_home / "mcp.json").read_text())
    assert saved["mcpServers"]["notes"] == {"command": sys.executable, "args": [str(SDK_SERVER)]}

    fake_server.enqueue(tool_call_reply([("c1", "notes__echo", json.dumps({"text": "from the notebook"}))]),
                        text_reply("the tool said hi"))
    result = shell.run_line_magic(
        "dsh", f"--new --model fake-model --base-url {fake_server.base_url} --cwd {tmp_path} --approve auto use it")
    assert result.ok and result.text == "the tool said hi"
    tool_msg = [m for m in list(fake_server.requests)[1].messages if m["role"] == "tool"][0]
    assert tool_msg["content"] == "echo: from the notebook"
    call = [e for e in result.events if e.type == "tool/call"][0]
    assert (call.server, call.tool) == ("notes", "echo")

    removed = shell.run_line_magic("dsh", "mcp remove notes")
    assert "removed MCP server 'notes'" in repr(removed) and "notes__echo" not in repr(removed)
    assert wait_gone(str(SDK_SERVER)) == []  # removing it stopped its process
    assert json.loads((isolated_dsh_home / "mcp.json").read_text())["mcpServers"] == {}


@pytest.mark.parametrize(("line", "code"), [
    ("mcp add web --url ftp://nowhere", "MCP_CONFIG"),
    ("mcp add nothing", "MCP_CONFIG"),
    ("mcp remove ghost", "MCP_UNKNOWN_SERVER"),
    ("mcp restart ghost", "MCP_UNKNOWN_SERVER"),
    ("mcp add 'unclosed -- x", "MCP_CONFIG"),
])
def test_bad_mcp_lines_are_coded_errors(shell: Any, line: str, code: str) -> None:
    with pytest.raises(DshMagicError) as err:
        shell.run_line_magic("dsh", line)
    assert f"[{code}]" in str(err.value)


def test_a_prompt_that_starts_with_mcp_is_still_a_prompt() -> None:
    from dsh_notebook.cmdline.dsh_line import parse_line

    assert parse_line("mcp is a protocol; explain it").command == "prompt"
    args = parse_line("mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .")
    assert (args.command, args.text) == ("mcp", "add fs -- npx -y @modelcontextprotocol/server-filesystem .")
