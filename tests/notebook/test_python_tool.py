"""The ``python`` tool's execution and the main-thread runner (no kernel needed)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from dsh_notebook.notebook.context.mainthread import MainThreadRunner
from dsh_notebook.notebook.context.python_tool import make_python_tool, run_python
from dsh_notebook.tools.base import ToolContext


def test_run_python_returns_stdout_value_and_keeps_variables() -> None:
    ns: dict[str, object] = {"x": 20}
    run = run_python("import sys\nprint('hello', x)\nprint('warn', file=sys.stderr)\ny = x + 1\ny * 2", ns)
    assert run.stdout == "hello 20\n" and run.stderr == "warn\n"
    assert run.value == "42" and run.error is None
    assert ns["y"] == 21
    assert run.to_text() == "[stdout]\nhello 20\n[stderr]\nwarn\n[value]\n42"


def test_run_python_errors_are_user_tracebacks() -> None:
    run = run_python("a = 1\nraise ValueError('bad ' + str(a))", {})
    assert run.error is not None
    assert "ValueError: bad 1" in run.error and "<dsh-python>" in run.error
    assert "python_tool.py" not in run.error
    syntax = run_python("def (:", {})
    assert syntax.error is not None and "SyntaxError" in syntax.error
    exiting = run_python("raise SystemExit(3)", {})
    assert exiting.error is not None and "SystemExit" in exiting.error


def test_none_value_and_no_output() -> None:
    assert run_python("x = 1", {}).to_text() == "(no output)"
    assert run_python("None", {}).value is None


def test_runner_runs_items_on_the_main_thread_when_drained() -> None:
    runner = MainThreadRunner()
    seen: list[str] = []
    done = threading.Event()
    futures = []

    def worker() -> None:
        futures.append(runner.submit(lambda: seen.append(threading.current_thread().name) or 5))
        done.set()

    threading.Thread(target=worker).start()
    done.wait(5)
    assert runner.pending == 1 and not seen
    assert runner.drain() == 1
    assert seen == [threading.main_thread().name]
    assert futures[0].result(1) == 5


def test_runner_wakes_a_waiter_and_skips_cancelled_items() -> None:
    runner = MainThreadRunner()
    woken = threading.Event()
    remove = runner.add_waker(woken.set)
    t = threading.Thread(target=lambda: runner.submit(lambda: 1).cancel())
    t.start()
    t.join(5)
    assert woken.is_set()
    assert runner.drain() == 0  # the requester cancelled before the main thread got to it
    remove()


@pytest.mark.integration
async def test_python_tool_executes_through_the_runner_from_another_loop(tmp_path: Path) -> None:
    runner = MainThreadRunner(asyncio.get_running_loop())  # bg mode: scheduled on this loop
    ns: dict[str, object] = {"data": [1, 2, 3]}
    tool = make_python_tool(lambda: ns, runner)
    assert tool.approval == "ask" and tool.name == "python"
    result: dict[str, object] = {}

    def host_thread() -> None:
        ctx = ToolContext(cwd=tmp_path, call_id="c1", tool_name="python")
        result["out"] = asyncio.run(tool.execute(tool.args_model(code="total = sum(data)\ntotal"), ctx))

    thread = threading.Thread(target=host_thread)
    thread.start()
    await asyncio.to_thread(thread.join)  # meanwhile the runner's drain runs on this loop
    out = result["out"]
    assert out.text == "[value]\n6\n[namespace] added total (int)" and not out.is_error  # type: ignore[attr-defined]
    assert out.meta == {"namespace": {"added": [{"name": "total", "type": "int"}], "rebound": [], "deleted": []}}  # type: ignore[attr-defined]
    assert ns["total"] == 6


def test_keyboard_interrupt_in_user_code_fails_the_item_and_propagates() -> None:
    runner = MainThreadRunner()
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("f", runner.submit(lambda: (_ for _ in ()).throw(KeyboardInterrupt))))
    t.start()
    t.join(5)
    with pytest.raises(KeyboardInterrupt):
        runner.drain()
    with pytest.raises(Exception) as info:
        box["f"].result(1)
    assert getattr(info.value, "code", None) == "INTERRUPTED"
