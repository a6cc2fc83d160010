"""``%dsh`` against the loopback OpenAI-compatible server in an ``InteractiveShell``: the
``python`` tool, stdin approvals, ``%dsh stop``, interrupts, queue and steer."""

from __future__ import annotations

import _thread
import builtins
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.cell.turn import CellTurn
from dsh_notebook.notebook.magic.magics import DshMagicError
from dsh_notebook.wire.events import ToolResult, UserMessageEvent
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

from .conftest import fake_flags


def tool_messages(server: FakeOpenAIServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].messages if m.get("role") == "tool"]


def wait_for(predicate: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_python_tool_runs_in_the_user_namespace_on_the_main_thread(shell: Any, fake_server: FakeOpenAIServer) -> None:
    code = "import threading\nprint('secret is', secret)\nfrom_agent = secret * 2\n(threading.current_thread() is threading.main_thread(), from_agent)"
    fake_server.enqueue(tool_call_reply([("c1", "python", json.dumps({"code": code}))]), text_reply("done"))
    shell.user_ns["secret"] = 21
    result = shell.run_cell(f"%dsh {fake_flags(fake_server)} inspect my data").result
    assert result.ok and result.text == "done"
    [tool] = tool_messages(fake_server, 1)
    assert tool["content"] == ("[stdout]\nsecret is 21\n[value]\n(True, 42)\n"
                               "[namespace] added from_agent (int), threading (module)")
    assert shell.user_ns["from_agent"] == 42
    tools = {t["function"]["name"] for t in fake_server.requests[0].body["tools"]}
    assert {"python", "bash", "read"} <= tools


@pytest.mark.integration
@pytest.mark.parametrize(("answer", "allowed"), [("y", True), ("no", False)])
def test_ask_approval_through_input(shell: Any, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch,
                                    answer: str, allowed: bool) -> None:
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo approved-run"}')]), text_reply("ok"))
    asked: list[tuple[str, str]] = []

    def fake_input(prompt: str = "") -> str:  # the kernel's stdin, at the boundary
        asked.append((prompt, threading.current_thread().name))
        return answer

    monkeypatch.setattr(builtins, "input", fake_input)
    result = shell.run_cell(f"%dsh {fake_flags(fake_server, 'ask')} run echo").result
    assert len(asked) == 1 and "bash" in asked[0][0] and "echo approved-run" in asked[0][0]
    assert asked[0][1] == threading.main_thread().name
    [tool] = tool_messages(fake_server, 1)
    res = next(e for e in result.events if isinstance(e, ToolResult))
    if allowed:
        assert "approved-run" in tool["content"] and res.error is None
    else:
        assert res.error is not None and res.error.code == "DENIED" and "approved-run" not in tool["content"]
    assert [e.decision for e in result.events if e.type == "approval/decided"] == ["allow" if allowed else "deny"]


@pytest.mark.integration
def test_stop_cancels_a_background_turn_and_the_session_goes_on(shell: Any, fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "touch started && sleep 30"}')]), text_reply("after"))
    handle = shell.run_cell(f"%dsh --bg --no-widget --cwd {tmp_path} {fake_flags(fake_server)} sleep").result
    assert isinstance(handle, CellTurn)
    wait_for(lambda: (tmp_path / "started").exists(), "the bash tool to start")
    assert shell.run_cell("%dsh stop").error_in_exec is None
    result = handle.wait(timeout=60)
    assert result.reason.kind == "aborted"
    [(call, res)] = result.tool_calls
    assert res is not None and res.error is not None and res.error.code == "CANCELLED"
    again = shell.run_cell(f"%dsh --session {handle.session_id} and now?").result
    assert again.ok and again.text == "after" and again.turn == result.turn + 1
    assert tool_messages(fake_server, 1)[0]["tool_call_id"] == "c1"  # the strict server saw the answer


@pytest.mark.integration
def test_interrupt_cancels_the_blocking_turn(shell: Any, fake_server: FakeOpenAIServer, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "touch started && sleep 30"}')]), text_reply("next"))

    def interrupt_when_running() -> None:
        wait_for(lambda: (tmp_path / "started").exists(), "the bash tool to start")
        _thread.interrupt_main()  # what a kernel Interrupt does: KeyboardInterrupt on the main thread

    threading.Thread(target=interrupt_when_running, daemon=True).start()
    run = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server)} sleep")
    error = run.error_in_exec
    assert isinstance(error, DshMagicError) and error.error.code == "INTERRUPTED"
    last = shell.magics_manager.registry["DshMagics"].last
    assert last.reason.kind == "aborted"
    assert [res.error.code for _, res in last.tool_calls if res and res.error] == ["CANCELLED"]
    assert "Traceback" not in capsys.readouterr().out
    again = shell.run_cell("%dsh go on").result
    assert again.ok and again.text == "next" and again.session_id == last.session_id


@pytest.mark.integration
def test_queue_and_steer_while_a_turn_runs(shell: Any, fake_server: FakeOpenAIServer, tmp_path: Path) -> None:
    fake_server.enqueue(
        tool_call_reply([("c1", "bash", '{"command": "echo held"}')]),  # waits for approval
        text_reply("first answer"),
        text_reply("queued answer"),
    )
    flags = f"--bg --no-widget --cwd {tmp_path} {fake_flags(fake_server, 'ask')}"
    first = shell.run_cell(f"%dsh {flags} first").result
    wait_for(lambda: bool(first.approvals.waiting), "the approval to be asked")
    steer = shell.run_cell("%dsh --bg --no-widget --steer also this").result
    queued = shell.run_cell("%dsh --bg --no-widget later").result
    result = first.wait(timeout=60, ask=lambda prompt: "y")
    steered = steer.wait(timeout=60)
    later = queued.wait(timeout=60)
    assert result.ok and steered.turn == result.turn and steered.text == "first answer"
    assert later.turn == result.turn + 1 and later.text == "queued answer"
    texts = [e.message.content[0].text for e in result.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"]
    assert texts == ["first", "also this"]


def test_python_tool_needs_approval_unless_auto(shell: Any, fake_server: FakeOpenAIServer,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server.enqueue(tool_call_reply([("c1", "python", '{"code": "touched = True"}')]), text_reply("ok"))
    asked: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt="": asked.append(prompt) or "n")
    result = shell.run_cell(f"%dsh {fake_flags(fake_server, 'ask')} touch it").result
    assert len(asked) == 1 and asked[0].startswith("dsh: allow python touched = True?")
    assert "touched" not in shell.user_ns  # denied: the code never ran
    [(_, res)] = result.tool_calls
    assert res is not None and res.error is not None and res.error.code == "DENIED"
