"""Issue 21 (low): 200k-deep nested tool arguments crashed ``run`` with a RecursionError
traceback; 100 MB of arguments were parsed (and did not finish). Now each call gets a coded
error result (``BAD_ARGUMENTS`` / ``ARGUMENTS_TOO_LARGE``) and the run goes on to its answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRegistry, ToolRuntime, builtin_tools
from dsh_notebook.tools.arguments import MAX_ARGUMENT_CHARS
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.tools.helpers import Frames, call

REPO = Path(__file__).resolve().parents[2]
DEEP = '{"command": ' + "[" * 200_000 + "]" * 200_000 + "}"
BIG = json.dumps({"command": "echo " + "x" * (MAX_ARGUMENT_CHARS + 10)})


def runtime(ws: Path) -> ToolRuntime:
    return ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=Session("s_a", cwd=str(ws)),
                       frames=Frames(), policy_mode="auto")


@pytest.mark.parametrize(("raw", "code"), [(DEEP, "BAD_ARGUMENTS"), ('{"command": "ls", "x": ' + "[" * 70 + "]" * 70 + "}",
                                            "BAD_ARGUMENTS"), (BIG, "ARGUMENTS_TOO_LARGE")],
                         ids=["deep", "nested-71", "big"])  # short ids: a test id is in PYTEST_CURRENT_TEST
async def test_deep_or_huge_arguments_get_a_coded_result(tmp_path: Path, raw: str, code: str) -> None:
    out = await runtime(tmp_path).run(call("bash", raw))
    assert out.code == code and out.is_error
    assert len(out.text) < 2_000


@pytest.mark.parametrize("raw", [DEEP, BIG], ids=["deep", "big"])  # the env of the CLI carries PYTEST_CURRENT_TEST
def test_run_answers_after_such_a_call_without_a_traceback(tmp_path: Path, raw: str) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("call_1", "bash", raw)]), text_reply("all done."))
        env = {**os.environ, "DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO),
               "DSH_API_KEY": FakeOpenAIServer.api_key or ""}
        done = dsh("run", "--approve", "deny", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path), "go", env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stdout + done.stderr
    assert "all done." in done.stdout
    assert ("BAD_ARGUMENTS" if raw is DEEP else "ARGUMENTS_TOO_LARGE") in done.stdout + done.stderr
