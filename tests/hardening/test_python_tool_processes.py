"""Issue 21 (low): the notebook's ``python`` tool left processes behind after the turn and the
kernel. Now what the code starts — ``subprocess``, ``setsid``, ``nohup``, a shell's background
job, a bare ``fork`` — is killed when the call ends, and the result says so. Real processes."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path

from dsh_notebook.notebook.context.mainthread import MainThreadRunner
from dsh_notebook.notebook.context.python_tool import make_python_tool
from dsh_notebook.tools.base import ToolContext, ToolOutput

CODE = """
import os, subprocess, time
plain = subprocess.Popen(["sleep", "313.71"])
detached = subprocess.Popen(["sleep", "313.72"], start_new_session=True)
subprocess.run("nohup sleep 313.73 >/dev/null 2>&1 &", shell=True)
subprocess.run("setsid sleep 313.74 >/dev/null 2>&1 < /dev/null &", shell=True)
forked = os.fork()
if forked == 0:
    try:
        os.setsid()
        time.sleep(300)
    finally:
        os._exit(0)
started = [plain.pid, detached.pid, forked]
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def sleepers() -> list[str]:
    done = subprocess.run(["pgrep", "-f", "sleep 313.7"], capture_output=True, text=True, check=False)
    return done.stdout.split()


async def run_tool(ns: dict[str, object], code: str, tmp_path: Path) -> ToolOutput:
    runner = MainThreadRunner(asyncio.get_running_loop())
    tool = make_python_tool(lambda: ns, runner)
    result: dict[str, ToolOutput] = {}

    def host_thread() -> None:
        ctx = ToolContext(cwd=tmp_path, call_id="c1", tool_name="python")
        result["out"] = asyncio.run(tool.execute(tool.args_model(code=code), ctx))

    thread = threading.Thread(target=host_thread)
    thread.start()
    await asyncio.to_thread(thread.join)
    return result["out"]


async def test_processes_started_by_a_python_call_end_with_the_call(tmp_path: Path) -> None:
    ns: dict[str, object] = {}
    out = await run_tool(ns, CODE, tmp_path)
    assert not out.is_error, out.text
    started = ns["started"]
    assert isinstance(started, list) and len(started) == 3
    assert [pid for pid in started if alive(pid)] == []
    assert sleepers() == []
    assert "[processes]" in out.text and "stopped at the end of the call" in out.text


async def test_a_call_that_starts_nothing_says_nothing_and_older_children_are_kept(tmp_path: Path) -> None:
    older = subprocess.Popen(["sleep", "313.79"])  # noqa: ASYNC220 (started outside the call: not its)
    try:
        out = await run_tool({}, "x = 1 + 1", tmp_path)
        assert "[processes]" not in out.text
        assert older.poll() is None
    finally:
        older.kill()
        older.wait()
