"""``%dsh`` on real kernels: nbclient runs notebooks built here; jupyter_client drives
interrupts and stdin approvals. Models: the embedded scripted model and the loopback
OpenAI-compatible server (started in this process, reached with ``--base-url``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests.fixtures.cells import cell_text
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.kernel_messages import iopub_until_idle, shell_reply

from .conftest import fake_flags

pytestmark = pytest.mark.kernel


def run_notebook(cells: list[str], cwd: Path, *, allow_errors: bool = False) -> Any:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


text_of = cell_text


def wait_for(predicate: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_nbclient_runs_dsh_cells_with_the_scripted_model(kernel_env: dict[str, str], tmp_path: Path) -> None:
    nb = run_notebook([
        "%load_ext dsh_notebook\n%load_ext dsh_notebook",
        "%dsh run the tests; if they fail fix src/math.ts",
        "%%dsh\nread README.md and summarise",
        "r = _\n(r.ok, r.turn, [c.name for c, _ in r.tool_calls])",
        "%dsh sessions",
        "%dsh show --no-widget",
        "%dsh what can you do?",
        "h = %dsh --bg hello in the background\nh",
        "(await h).ok",
        "%dsh show",
        "%dsh show --inspect",
    ], tmp_path)
    run_cell, cell_cell = nb.cells[1], nb.cells[2]
    live = [o for o in run_cell.outputs if o.output_type == "display_data"]
    assert len(live) == 1 and "text/html" in live[0].data  # one display, updated in place
    assert "text/markdown" not in live[0].data  # issue 35: the model's Markdown is never handed to a renderer
    rich = live[0].data["text/html"]
    assert "<strong>bash</strong> <code>node test/run.mjs</code>" in rich and "<strong>edit</strong>" in rich and "✓" in rich
    assert "tests pass now" in rich
    result = next(o for o in run_cell.outputs if o.output_type == "execute_result")
    assert "TurnResult completed" in result.data["text/plain"] and "text/html" in result.data
    assert "→ read README.md" in text_of(cell_cell)
    assert "(True, 2, ['read'])" in text_of(nb.cells[3])
    assert text_of(nb.cells[4]).count("s_") == 1 and "read README.md and summarise" not in text_of(nb.cells[4])
    assert "tool/call" in text_of(nb.cells[5]) and "turn 2 completed" in text_of(nb.cells[5])
    assert "offline demo model" in text_of(nb.cells[6])  # a trailing "?" is a prompt, not help
    widget = "application/vnd.jupyter.widget-view+json"
    bg = nb.cells[7].outputs
    assert any(widget in o.get("data", {}) for o in bg)  # --bg shows the live LoopWidget
    assert any("<dsh run" in o.get("data", {}).get("text/plain", "") for o in bg)  # and returns the handle
    assert "True" in text_of(nb.cells[8])
    for cell in nb.cells[9:11]:
        assert any(widget in o.get("data", {}) for o in cell.outputs), cell.outputs


def test_nbclient_against_the_openai_compatible_server(kernel_env: dict[str, str], fake_server: FakeOpenAIServer,
                                                       tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    fake_server.enqueue(
        tool_call_reply([("c1", "read", '{"file_path": "notes.txt"}')]),
        text_reply("The notes say alpha and beta.", pieces=6),
        tool_call_reply([("c2", "python", json.dumps({"code": "print(len(rows))\nsum(rows)"}))]),
        text_reply("bg done"),
        tool_call_reply([("c3", "bash", '{"command": "echo should-not-run"}')]),
        text_reply("denied it"),
    )
    flags = fake_flags(fake_server)
    nb = run_notebook([
        "%load_ext dsh_notebook",
        f"%dsh {flags} what is in notes.txt?",
        "rows = [1, 2, 3]",
        f"h = %dsh --bg --no-widget {flags} add the rows",
        "r = await h\nr.text, r.reason.kind, h.session_id == r.session_id",
        f"%%dsh --new --model openai:fake-model --base-url {fake_server.base_url}\nrun echo",
    ], tmp_path)
    answer = text_of(nb.cells[1])
    assert "→ read notes.txt" in answer and "The notes say alpha and beta." in answer
    assert "sk-fake" not in json.dumps(nb)  # the key never reaches an output
    assert "('bg done', 'completed', True)" in text_of(nb.cells[4])
    python_result = [m for m in fake_server.requests[3].messages if m.get("role") == "tool"][-1]
    assert python_result["content"] == "[stdout]\n3\n[value]\n6\n[namespace] no names changed"  # ran in the notebook, during `await`
    denied = text_of(nb.cells[5])  # approve defaults to ask outside the demo; nbclient has no stdin
    assert "mode default" in denied and "no stdin to ask on; denied" in denied and "denied it" in denied
    bash_result = [m for m in fake_server.requests[5].messages if m.get("role") == "tool"][-1]
    assert "should-not-run" not in bash_result["content"]


def test_kernel_interrupt_cancels_the_turn_and_the_next_prompt_works(
    kernel: tuple[Any, Any], fake_server: FakeOpenAIServer, tmp_path: Path, isolated_dsh_home: Path
) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "touch started && sleep 30"}')]),
                        text_reply("after the interrupt"))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} sleep a while")
    wait_for(lambda: (tmp_path / "started").exists(), "bash to start")
    km.interrupt_kernel()
    reply = shell_reply(kc, msg_id)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "DshMagicError"
    assert "INTERRUPTED" in reply["content"]["evalue"] and "ended aborted" in reply["content"]["evalue"]
    outputs = iopub_until_idle(kc, msg_id)
    errors = [m for m in outputs if m["msg_type"] == "error"]
    assert len(errors[0]["content"]["traceback"]) == 1  # one line, not a traceback
    [log] = (isolated_dsh_home / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    result = next(e for e in events if e["type"] == "tool/result")
    assert result["error"]["code"] == "CANCELLED"
    assert [e["reason"]["kind"] for e in events if e["type"] == "turn/end"] == ["aborted"]
    again = kc.execute_interactive("%dsh and now?", timeout=90)
    assert again["content"]["status"] == "ok"
    tools = [m for m in fake_server.requests[1].messages if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in tools] == ["c1"]  # every call answered before the next request
    lines = log.read_text().splitlines()
    assert '"after the interrupt"' in lines[-3] or any('"after the interrupt"' in line for line in lines)


@pytest.mark.parametrize(("answer", "allowed"), [("y", True), ("n", False)])
def test_stdin_approval_in_a_kernel(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer,
                                    answer: str, allowed: bool) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo approved-run"}')]), text_reply("fin"))
    # as JupyterLab sends it (metadata.cellId): the live display (a terminal client gets the stream)
    content = {"code": f"%dsh {fake_flags(fake_server, 'ask')} run echo", "silent": False, "store_history": True,
               "user_expressions": {}, "allow_stdin": True, "stop_on_error": True}
    msg = kc.session.msg("execute_request", content, metadata={"cellId": "cell-approval"})
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    request = kc.get_stdin_msg(timeout=60)
    assert request["msg_type"] == "input_request"
    assert "allow bash echo approved-run?" in request["content"]["prompt"]
    kc.input(answer)
    reply = shell_reply(kc, msg_id)
    assert reply["content"]["status"] == "ok"
    [tool] = [m for m in fake_server.requests[1].messages if m.get("role") == "tool"]
    assert ("approved-run" in tool["content"]) is allowed
    outputs = iopub_until_idle(kc, msg_id)
    shown = json.dumps([m["content"] for m in outputs])
    assert ("DENIED" in shown) is (not allowed) and "fin" in shown
    # the typed answer stays beside its call: the view asked in one display (which ends with the
    # call, waiting), and the rest of the turn went to a new display below the answer
    last: dict[str, str] = {}
    order: list[str] = []
    for m in outputs:
        if m["msg_type"] in ("display_data", "update_display_data"):
            did = m["content"]["transient"]["display_id"]
            if did not in order:
                order.append(did)
            last[did] = m["content"]["data"]["text/plain"]
    assert len(order) == 2, order
    first, second = (last[d] for d in order)
    assert first.rstrip().endswith(("[? waiting for approval]", "[? waiting for approval ↓ continued below]")) and "fin" not in first, first
    assert "bash echo approved-run" in second and "fin" in second, second
    assert ("DENIED" in second) is (not allowed)


def test_bg_python_tool_runs_on_the_idle_kernel_loop(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "python", '{"code": "rows * 2"}')]), text_reply("bg answer"))
    assert kc.execute_interactive("rows = [7]", timeout=30)["content"]["status"] == "ok"
    reply = kc.execute_interactive(f"h = %dsh --bg --no-widget {fake_flags(fake_server)} double the rows", timeout=60)
    assert reply["content"]["status"] == "ok"
    # no cell runs now: the kernel is idle, and its loop serves the python tool
    wait_for(lambda: len(fake_server.requests) >= 2, "the python tool to run on the idle kernel")
    [tool] = [m for m in fake_server.requests[1].messages if m.get("role") == "tool"]
    assert tool["content"] == "[value]\n[7, 7]\n[namespace] no names changed"
    seen: list[str] = []
    kc.execute_interactive("print((await h).text)", timeout=60,
                           output_hook=lambda m: seen.append(m["content"].get("text", "")))
    assert "bg answer" in "".join(seen)
