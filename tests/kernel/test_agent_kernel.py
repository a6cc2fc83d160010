"""The agent kernel ``dsh`` on real parts: the kernelspec installed into a temporary prefix by the
CLI, kernels started from it by nbclient and jupyter_client; models: the embedded scripted model
on the demo workspace and the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.fixtures.cells import cell_text, joined_streams
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.kernel_messages import iopub_until_idle, shell_reply

from .conftest import start_agent_kernel

pytestmark = pytest.mark.kernel

KERNELSPEC = {"name": "dsh", "display_name": "Agent (dsh)", "language": "dsh"}


def log_events(home: Path) -> list[dict[str, Any]]:
    [log] = (home / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


texts = cell_text


def test_done_when_a_notebook_on_kernel_dsh_runs_prompts_python_and_sessions(
        agent_env: dict[str, str], isolated_dsh_home: Path, tmp_path: Path) -> None:
    """The issue's acceptance check, as written."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": KERNELSPEC}, cells=[
        nbformat.v4.new_code_cell("read README.md and summarise"),
        nbformat.v4.new_code_cell("%%python\nx = 42\nprint(x)"),
        nbformat.v4.new_code_cell("the value of x is {x}; what is it?"),
        nbformat.v4.new_code_cell("%dsh sessions"),
    ])
    client = NotebookClient(nb, timeout=180, kernel_name="dsh", allow_errors=False,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises on any cell error
    prompt, python, interpolated, sessions = nb.cells
    [live] = [o for o in prompt.outputs if o.output_type == "display_data"]  # one display, updated in place
    assert "<strong>read</strong> <code>README.md</code>" in live.data["text/html"] and "demo-math" in live.data["text/html"]
    assert "TurnResult completed" in texts(prompt) and "from cell [1]" in texts(prompt)
    assert [o["text"] for o in joined_streams(python.outputs) if o["output_type"] == "stream"] == ["42\n"]
    events = log_events(isolated_dsh_home)
    users = [e["message"] for e in events if e["type"] == "user/message" and e["message"]["source"]["kind"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["read README.md and summarise", "the value of x is 42; what is it?"]
    assert [u["source"]["cell"]["executionCount"] for u in users] == [1, 3]
    streamed = [e for e in events if e["type"] == "assistant/message" and e.get("stream")]
    assert streamed  # the answer came as a stream of chunks
    header = json.loads(next((isolated_dsh_home / "sessions").glob("*.jsonl")).read_text().splitlines()[0])
    assert header["id"] in texts(sessions) and "the value of x is 42" not in texts(sessions)
    assert all(o.output_type != "error" for c in nb.cells for o in c.outputs)


def execute(kc: Any, code: str, *, cell_id: str | None = None, allow_stdin: bool = False) -> str:
    """An execute_request as JupyterLab sends it (``metadata.cellId``)."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": allow_stdin, "stop_on_error": True}
    msg = kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
    kc.shell_channel.send(msg)
    return str(msg["header"]["msg_id"])


def run(kc: Any, code: str, **kw: Any) -> tuple[dict[str, Any], str]:
    msg_id = execute(kc, code, **kw)
    reply = shell_reply(kc, msg_id)
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)], ensure_ascii=False)
    return reply, shown


def wait_for(predicate: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_interrupt_cancels_a_prompt_cell_and_the_next_prompt_works(
        agent_kernel: tuple[Any, Any], fake_server: FakeOpenAIServer, tmp_path: Path, isolated_dsh_home: Path) -> None:
    km, kc = agent_kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "touch started && sleep 30"}')]),
                        text_reply("after the interrupt"))
    assert run(kc, '%config DshMagics.approve = "auto"')[0]["content"]["status"] == "ok"
    msg_id = execute(kc, "sleep a while")
    wait_for(lambda: (tmp_path / "started").exists(), "bash to start")
    km.interrupt_kernel()
    reply = shell_reply(kc, msg_id)
    assert reply["content"]["status"] == "error" and "INTERRUPTED" in reply["content"]["evalue"]
    iopub_until_idle(kc, msg_id)
    events = log_events(isolated_dsh_home)
    assert next(e for e in events if e["type"] == "tool/result")["error"]["code"] == "CANCELLED"
    assert [e["reason"]["kind"] for e in events if e["type"] == "turn/end"] == ["aborted"]
    again, shown = run(kc, "and now?")
    assert again["content"]["status"] == "ok" and "after the interrupt" in shown


def test_stdin_approval_in_a_prompt_cell(agent_kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = agent_kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo approved-run"}')]), text_reply("ran it"),
                        tool_call_reply([("c2", "bash", '{"command": "echo second-run"}')]), text_reply("denied"))
    for answer, marker in (("y", "approved-run"), ("n", "second-run")):
        msg_id = execute(kc, f"run {marker}", allow_stdin=True)  # approve: ask (not the demo workspace)
        request = kc.get_stdin_msg(timeout=60)
        assert request["msg_type"] == "input_request" and f"allow bash echo {marker}?" in request["content"]["prompt"]
        kc.input(answer)
        assert shell_reply(kc, msg_id)["content"]["status"] == "ok"
        iopub_until_idle(kc, msg_id)
    results = [m for r in fake_server.requests for m in r.messages if m.get("role") == "tool"]
    first = next(m for m in results if m["tool_call_id"] == "c1")
    second = next(m for m in results if m["tool_call_id"] == "c2")
    assert "approved-run" in first["content"] and "second-run" not in second["content"]


def _complete(kc: Any, code: str, cursor: int | None = None) -> dict[str, Any]:
    msg_id = kc.complete(code, len(code) if cursor is None else cursor)
    return shell_reply(kc, msg_id, timeout=30)["content"]


def _inspect(kc: Any, code: str, cursor: int) -> dict[str, Any]:
    msg_id = kc.inspect(code, cursor)
    return shell_reply(kc, msg_id, timeout=30)["content"]


def test_completion_and_inspection(agent_kernel: tuple[Any, Any]) -> None:
    km, kc = agent_kernel
    setup = ("%%python\nclass Trap:\n    @property\n    def shape(self):\n        raise RuntimeError('ran user code')\n"
             "    def __repr__(self):\n        raise RuntimeError('ran user code')\n"
             "trap = Trap()\ntrap.size = 3\ndataset = [1, 2, 3]\nimport os")
    assert run(kc, setup)[0]["content"]["status"] == "ok"
    flags = _complete(kc, "%dsh --ap")
    assert flags["matches"] == ["--approve"] and flags["cursor_start"] == len("%dsh ")
    assert _complete(kc, "%dsh --approve ")["matches"] == ["ask", "auto", "deny"]
    assert "sessions" in _complete(kc, "%dsh se")["matches"]
    assert "script:auto" in _complete(kc, "%dsh --model scr")["matches"]
    var = _complete(kc, "summarise {data")
    assert var["matches"] == ["dataset}"] and var["cursor_start"] == len("summarise {")
    assert _complete(kc, "summarise the data")["matches"] == []  # prose: nothing to offer
    py = _complete(kc, "%%python\nos.pa")
    assert "os.path" in py["matches"] or "path" in py["matches"]
    assert py["cursor_start"] >= len("%%python\n")

    helped = _inspect(kc, "%dsh sessions", 2)
    assert helped["found"] and "--approve" in helped["data"]["text/plain"]
    described = _inspect(kc, "look at {trap} please", 10)
    text = described["data"]["text/plain"]
    assert described["found"] and "Trap" in text and "size" in text and "ran user code" not in text
    listed = _inspect(kc, "and {dataset}", 7)
    assert "{dataset} — list" in listed["data"]["text/plain"] and "length: 3" in listed["data"]["text/plain"]
    assert _inspect(kc, "%%python\nlen", 11)["found"]
    assert not _inspect(kc, "plain words", 3)["found"]

    reply, shown = run(kc, "tell me about {missing_name}")  # a bad prompt: one coded line, no turn
    assert reply["content"]["status"] == "error" and "UNKNOWN_VARIABLE" in shown and "Traceback" not in shown
    reply, shown = run(kc, "%%python\n\nraise ValueError('boom')")  # Python errors are Python's, line numbers kept
    assert reply["content"]["ename"] == "ValueError" and ", line 3" in shown
    reply, shown = run(kc, "dataset?")  # IPython's help on a variable (a pager payload)
    [page] = reply["content"]["payload"]
    assert page["source"] == "page" and "list" in page["data"]["text/plain"]


def test_notebook_tools_namespace_diff_and_cell_links(
        fake_env: dict[str, str], fake_server: FakeOpenAIServer, tmp_path: Path, isolated_dsh_home: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Saved heading"),
                                                   nbformat.v4.new_code_cell("%%python\nrows = [1, 2, 3]")]), notebook)
    km, kc = start_agent_kernel({**fake_env, "JPY_SESSION_NAME": str(notebook)}, tmp_path)
    try:
        fake_server.enqueue(
            tool_call_reply([("c1", "notebook_read", "{}"), ("c2", "inspect_var", '{"name": "rows"}'),
                             ("c3", "notebook_read", '{"source": "file"}')]),
            tool_call_reply([("c4", "python", json.dumps({"code": "total = sum(rows)\ndel scratch\nrows = rows * 2"}))]),
            tool_call_reply([("c5", "notebook_insert", json.dumps({"code": "print(total)", "markdown": "Show the total"}))]),
            text_reply("all done"))
        assert run(kc, '%config DshMagics.approve = "auto"')[0]["content"]["status"] == "ok"
        assert run(kc, "%%python\nrows = [1, 2, 3]\nscratch = [0, 0, 0]\nprint('rows ready')")[0]["content"]["status"] == "ok"
        msg_id = execute(kc, "look at my notebook and total the rows", cell_id="cell-abc-123", allow_stdin=True)
        # a cell insert asks a person even under the legacy auto (issue 37 item 7): yes, on stdin
        asked = kc.get_stdin_msg(timeout=120)["content"]["prompt"]
        assert "allow notebook_insert" in asked and "print(total)" in asked and "[y/N]" in asked
        kc.input("y")
        reply = shell_reply(kc, msg_id)
        shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)], ensure_ascii=False)
        assert reply["content"]["status"] == "ok"
        tools = {m["tool_call_id"]: m["content"] for r in fake_server.requests for m in r.messages if m.get("role") == "tool"}
        assert "[2]\n%%python\nrows = [1, 2, 3]" in tools["c1"] and "rows ready" in tools["c1"]
        assert "[3] cell cell-abc-123\nlook at my notebook" in tools["c1"]  # the running cell, with its id
        assert json.loads(tools["c2"])["length"] == 3 and json.loads(tools["c2"])["type"] == "list"
        assert str(notebook) in tools["c3"] and "# Saved heading" in tools["c3"]
        assert tools["c4"].endswith("[namespace] added total (int); rebound rows (list[6]); deleted scratch (list[3])")
        [payload] = reply["content"]["payload"]
        assert payload["source"] == "set_next_input" and payload["text"] == "%%python\n# Show the total\nprint(total)"
        assert "rebound rows (list[6])" in shown  # the cell's tool line shows the diff
        events = log_events(isolated_dsh_home)
        result = next(e for e in events if e["type"] == "tool/result" and e["message"]["toolCallId"] == "c4")
        assert result["meta"]["namespace"]["deleted"] == [{"name": "scratch", "type": "list", "length": 3}]
        user = next(e for e in events if e["type"] == "user/message" and e["message"]["source"]["kind"] == "user")
        assert user["message"]["source"]["cell"] == {"cellId": "cell-abc-123", "executionCount": 3}
        assert "from cell [3]" in shown
        assert run(kc, "%%python\nprint(total, len(rows))")[1].count("6 6") == 1
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_restart_then_dsh_resume_continues_the_notebooks_session(
        fake_env: dict[str, str], fake_server: FakeOpenAIServer, tmp_path: Path, isolated_dsh_home: Path) -> None:
    notebook = tmp_path / "chat.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    km, kc = start_agent_kernel({**fake_env, "JPY_SESSION_NAME": str(notebook)}, tmp_path)
    try:
        fake_server.enqueue(text_reply("first answer"), text_reply("second answer"))
        assert run(kc, "remember the number 7")[0]["content"]["status"] == "ok"
        [log] = (isolated_dsh_home / "sessions").glob("*.jsonl")
        session_id = json.loads(log.read_text().splitlines()[0])["id"]
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=60)
        reply, shown = run(kc, "%dsh resume")
        assert reply["content"]["status"] == "ok" and f"{session_id} resumed from its log" in shown
        reply, shown = run(kc, "which number?")
        assert reply["content"]["status"] == "ok" and "second answer" in shown
        last = fake_server.requests[-1].messages
        assert any(m.get("content") == "remember the number 7" for m in last)  # the same conversation
        assert len(list((isolated_dsh_home / "sessions").glob("*.jsonl"))) == 1
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
