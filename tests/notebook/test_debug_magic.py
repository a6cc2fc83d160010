"""``%dsh --break`` in a real kernel: the cell pauses like pdb and answers on the kernel's stdin
(jupyter_client), the model is the loopback OpenAI-compatible server, the tools are real."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.kernel_messages import iopub_until_idle, shell_reply

from .conftest import fake_flags

pytestmark = pytest.mark.kernel


def _answer(kc: Any, *replies: str) -> list[str]:
    """Answer the next stdin requests in order; returns their prompts."""
    prompts = []
    for reply in replies:
        request = kc.get_stdin_msg(timeout=60)
        assert request["msg_type"] == "input_request"
        prompts.append(request["content"]["prompt"])
        kc.input(reply)
    return prompts


def test_break_at_04_edit_the_result_then_continue(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo original-output"}')]), text_reply("fin"))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break 04 run echo", allow_stdin=True)
    prompts = _answer(kc, "p", "e", "MARKER-e7 from the debugger", "c")
    assert prompts[0].startswith("debug [c/s/r/p/e/q]") and prompts[2].startswith("new result")
    reply = shell_reply(kc, msg_id)
    assert reply["content"]["status"] == "ok"
    [tool] = [m for m in fake_server.requests[1].messages if m.get("role") == "tool"]
    assert tool["content"] == "MARKER-e7 from the debugger"  # the model saw the edited result
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)])
    assert "paused at stage 04 (tool result committed)" in shown and "original-output" in shown
    assert "edited: original-output" in shown and "\\u2192 MARKER-e7 from the debugger (debug/edit #" in shown
    # the breakpoints were the prompt's: the next prompt runs through
    fake_server.enqueue(tool_call_reply([("c2", "bash", '{"command": "echo again"}')]), text_reply("done"))
    again = kc.execute(f"%dsh {fake_flags(fake_server)} once more", allow_stdin=True)
    assert shell_reply(kc, again)["content"]["status"] == "ok"


def test_step_through_the_stages_and_quit(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo x"}')]), text_reply("never"))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break 01 go", allow_stdin=True)
    _answer(kc, "s", "s", "x", "q")  # 01 → step → 02 → step → 03: an unknown answer shows help, q cancels
    reply = shell_reply(kc, msg_id)
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)])
    for stage in ("01 (model response settled)", "02 (tool call registered)", "03 (tool executes)"):
        assert f"paused at stage {stage}" in shown
    assert "c continue" in shown  # the help line
    assert reply["content"]["status"] == "ok" and "aborted" in shown  # q cancelled the turn
    assert len(fake_server.requests) == 1  # cancelled before a second request


def test_a_bad_break_flag_is_a_coded_error(kernel: tuple[Any, Any]) -> None:
    km, kc = kernel
    msg_id = kc.execute("%dsh --break 09 hello")
    reply = shell_reply(kc, msg_id)
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)])
    assert reply["content"]["status"] == "error" and "BAD_FLAG" in shown and "01..06" in shown
