"""The notebook tools with ``%dsh`` in a Python shell (IPython's ``InteractiveShell``, no kernel):
registered next to ``python``, reading IPython's own history and namespace."""

from __future__ import annotations

import json
from typing import Any

from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

from .conftest import answer_stdin, fake_flags


def test_notebook_tools_in_a_python_shell(shell: Any, fake_server: FakeOpenAIServer, monkeypatch: Any) -> None:
    fake_server.enqueue(
        tool_call_reply([("c1", "notebook_read", '{"last": 3}'), ("c2", "inspect_var", '{"name": "config.depth"}'),
                         ("c3", "inspect_var", '{"name": "nothing_here"}'), ("c4", "notebook_read", '{"source": "file"}')]),
        tool_call_reply([("c5", "notebook_insert", json.dumps({"code": "print(config)", "markdown": "Check it"}))]),
        text_reply("done"))
    shell.run_cell("class Config:\n    pass\nconfig = Config()\nconfig.depth = [1, 2]", store_history=True)
    shell.run_cell("print('configured')\ntoken = 'sk-live7Hq2Zp9XcR4mWv8TbL3n'", store_history=True)
    asked = answer_stdin(monkeypatch, "y")  # a cell insert asks a person even under --approve auto (issue 37)
    result = shell.run_cell(f"%dsh {fake_flags(fake_server)} what does my notebook hold?", store_history=True).result
    assert result.ok and result.text == "done"
    assert len(asked) == 1 and "allow notebook_insert" in asked[0] and "[y/N]" in asked[0]  # no "a": never granted
    tools = {m["tool_call_id"]: m["content"] for m in fake_server.requests[-1].messages if m.get("role") == "tool"}
    read = tools["c1"]
    assert "config = Config()" in read and "print('configured')" in read and "%dsh" in read
    assert read.index("config = Config()") < read.index("print('configured')")  # in order
    assert "sk-live7Hq2Zp9XcR4mWv8TbL3n" not in json.dumps(fake_server.requests[-1].body) and "token = '***'" in read
    assert json.loads(tools["c2"]) == {"name": "config.depth", "type": "list", "length": 2, "repr": "[1, 2]"}
    assert "no notebook variable 'nothing_here'" in tools["c3"]
    assert "named no notebook file" in tools["c4"]  # no JPY_SESSION_NAME here
    assert "no cell is running now" not in tools["c5"] and shell.rl_next_input == "# Check it\nprint(config)"
    names = {t["function"]["name"] for t in fake_server.requests[0].body["tools"]}
    assert {"python", "notebook_read", "inspect_var", "notebook_insert"} <= names
    results = {e.message.tool_call_id: e for e in result.events if e.type == "tool/result"}
    assert results["c3"].error is not None and results["c3"].error.code == "UNKNOWN_VARIABLE"
    assert result.cell is not None and result.cell.cell_id is None  # no front end: no cellId, but the count
    assert result.cell.execution_count == shell.execution_count - 1
    assert f"from cell [{result.cell.execution_count}]" in result.summary()


def test_dsh_completion_in_a_python_shell(shell: Any) -> None:
    shell.user_ns["dataset"] = [1]
    assert shell.complete("", "%dsh --ap", 9) == ("--ap", ["--approve"])
    assert shell.complete("", "%dsh --approve a", 16) == ("a", ["ask", "auto"])
    assert shell.complete("", "%dsh compare {data", 18) == ("data", ["dataset}"])
    text, matches = shell.complete("", "import o", 8)
    assert "os" in matches  # other lines: IPython's own completers
