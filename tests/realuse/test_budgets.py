"""Turn budgets (issue 13 item 1) end to end: the CLI in a subprocess, the real openai SDK,
the loopback OpenAI-compatible server, real tools."""

from __future__ import annotations

import json
from pathlib import Path

from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.wire.events import ToolResult, TurnEnd
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log


def _forever(n: int) -> list:  # a model that calls a tool on every request, each time a new line on
    # (the same call answered the same way three times in a row would end the turn ``stuck`` first)
    return [tool_call_reply([(f"call_{k}", "read", json.dumps({"file_path": "README.md", "offset": k + 1}))])
            for k in range(n)]


def test_a_model_that_calls_a_tool_forever_is_stopped_after_exactly_max_steps_requests(tmp_path: Path) -> None:
    workspace = copy_demo_workspace(tmp_path / "ws")
    with FakeOpenAIServer() as server:
        server.enqueue(*_forever(20))
        done = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(workspace),
                       "--max-steps", "5", "read README.md again and again", home=tmp_path / "home")
        requests = list(server.requests)
    assert done.returncode == 1, done.stderr
    assert "the turn did not complete: budget: max-steps 5 reached" in done.stderr
    assert len(requests) == 5 and all(r.status == 200 for r in requests)
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    assert end.reason.kind == "budget" and end.reason.cause == "max-steps" and end.reason.limit == 5
    answered = [e.message.tool_call_id for e in events if isinstance(e, ToolResult)]
    assert answered == [f"call_{k}" for k in range(5)]  # the last batch was answered too
    line = next(raw for raw in log.read_text().splitlines() if '"turn/end"' in raw)
    assert json.loads(line)["reason"] == {"kind": "budget", "cause": "max-steps", "limit": 5}


def test_dsh_max_steps_is_the_default_and_the_flag_wins(tmp_path: Path) -> None:
    workspace = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        server.enqueue(*_forever(10))
        by_env = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(workspace),
                         "loop", home=home, extra_env={"DSH_MAX_STEPS": "2"})
        assert len(server.requests) == 2
        sid, _ = session_of(by_env.stdout)
        by_flag = run_cli("run", "--session", sid, "--max-steps", "3", "loop more", home=home,
                          extra_env={"DSH_MAX_STEPS": "2"})
        assert len(server.requests) == 5
    assert by_env.returncode == 1 and "max-steps 2 reached" in by_env.stderr
    assert by_flag.returncode == 1 and "max-steps 3 reached" in by_flag.stderr


def test_a_bad_budget_is_a_coded_error(tmp_path: Path) -> None:
    done = run_cli("run", "--max-steps", "-3", "hi", home=tmp_path / "home")
    assert done.returncode == 2 and "[BAD_CONFIG] --max-steps must be a whole number" in done.stderr
    env = run_cli("run", "hi", home=tmp_path / "home", extra_env={"DSH_MAX_TIME": "soon"})
    assert env.returncode == 2 and "DSH_MAX_TIME" in env.stderr


def test_the_time_budget_stops_a_stalled_model_and_a_running_tool(tmp_path: Path) -> None:
    """max-time cancels the turn like an abort: a stalled stream is cut, a running bash is
    stopped, every call is answered, and the turn ends budget{max-time}."""
    workspace = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("never finishes", stall_after=1, stall_seconds=60))
        stalled = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(workspace),
                          "--max-time", "1", "hello", home=home)
        server.enqueue(tool_call_reply([("call_s", "bash", json.dumps({"command": "sleep 100"}))]))
        sid, _ = session_of(stalled.stdout)
        # generous, so that the loopback request is surely done and the tool running when it runs out
        sleeping = run_cli("run", "--session", sid, "--approve", "auto", "--max-time", "8.5", "sleep", home=home)
    for done in (stalled, sleeping):
        assert done.returncode == 1, done.stderr
        assert "budget: max-time" in done.stderr and "Traceback" not in done.stderr
    events = assert_valid_log(session_of(sleeping.stdout)[1])
    ends = [e.reason for e in events if isinstance(e, TurnEnd)]
    assert [(r.kind, r.cause, r.limit) for r in ends] == [("budget", "max-time", 1), ("budget", "max-time", 8.5)]
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.message.tool_call_id == "call_s" and result.message.is_error
