"""``%dsh mcp add`` and an MCP tool call in a real kernel (nbclient); when the kernel shuts down,
the server process is gone too."""

from __future__ import annotations

import json
import sys
import time
from functools import partial
from pathlib import Path

import nbformat
import psutil
import pytest
from nbclient import NotebookClient

from tests.fixtures.cells import cell_text
from tests.mcptools.support import SDK_SERVER
from tests.notebook.conftest import fake_flags
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.kernel


_text = partial(cell_text, markdown=False)


def test_mcp_in_a_real_kernel_and_no_server_left_after_it(
    kernel_env: dict[str, str], fake_server: FakeOpenAIServer, isolated_dsh_home: Path, tmp_path: Path
) -> None:
    marker = str(tmp_path / "kernel-mcp-marker")
    fake_server.enqueue(tool_call_reply([("c1", "k__add", json.dumps({"a": 1, "b": 2}))]), text_reply("three"))
    cells = [
        "%load_ext dsh_notebook",
        f"%dsh mcp add k -- {sys.executable} {SDK_SERVER} {marker}",
        f"r = %dsh --new {fake_flags(fake_server)} --cwd {tmp_path} add one and two\nprint(r.text)",
        "%dsh mcp",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    added, turn, listing = (_text(c) for c in nb.cells[1:])
    assert "added MCP server 'k'" in added and "k__add" in added
    assert "→ k__add" in turn and "three" in turn
    assert "k  [stdio]" in listing and "— running · 11 tools" in listing
    tool_msg = [m for m in list(fake_server.requests)[1].messages if m["role"] == "tool"][0]
    assert json.loads(tool_msg["content"]) == {"sum": 3}
    deadline = time.monotonic() + 10  # the kernel process is gone; give its last exit a moment
    while (left := [p for p in psutil.process_iter(["cmdline"]) if marker in (p.info["cmdline"] or [])]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == []  # the kernel is gone, and so is its MCP server
