"""Issue 21 (low), in a real agent kernel: processes a ``python`` tool call starts are gone when
the prompt cell finishes (they outlived the turn and the kernel before)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.kernel.conftest import agent_env, dsh_prefix, fake_env, fake_server, start_agent_kernel  # noqa: F401
from tests.kernel.test_agent_kernel import run
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.kernel
CODE = ("import subprocess\n"
        "subprocess.Popen(['setsid', 'sleep', '314.61'])\n"
        "subprocess.run('nohup sleep 314.62 >/dev/null 2>&1 &', shell=True)\n"
        "print('helpers started')")


def sleepers() -> list[str]:
    done = subprocess.run(["pgrep", "-f", "sleep 314.6"], capture_output=True, text=True, check=False)
    return done.stdout.split()


def test_a_python_call_in_the_kernel_leaves_no_process_behind(
        fake_env: dict[str, str], fake_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    km, kc = start_agent_kernel(fake_env, tmp_path)
    try:
        fake_server.enqueue(tool_call_reply([("c1", "python", json.dumps({"code": CODE}))]), text_reply("started"))
        assert run(kc, '%config DshMagics.approve = "auto"')[0]["content"]["status"] == "ok"
        reply, _ = run(kc, "start two helpers")
        assert reply["content"]["status"] == "ok"
        tools = {m["tool_call_id"]: m["content"] for r in fake_server.requests for m in r.messages if m.get("role") == "tool"}
        assert "helpers started" in tools["c1"] and "[processes] " in tools["c1"], tools["c1"]
        assert sleepers() == []
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
