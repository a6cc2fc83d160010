"""A real model offline (issue 20 items 8-9): ``local:smollm2`` through the product's own paths."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import psutil
import pytest

from dsh_notebook.config import settings_from_env
from dsh_notebook.errors import ModelError
from dsh_notebook.models.base import BlockEnd, Finish, ModelRequest
from dsh_notebook.models.routing import resolve_adapter
from dsh_notebook.wire.events import (
    AssistantAttempt,
    ContextCompacted,
    LlmRetry,
    RequestHeader,
    ToolCall,
    ToolResult,
    ToolSchema,
    TurnEnd,
)
from dsh_notebook.wire.messages import TextBlock, ToolCallBlock, user_text
from tests.realuse.cli import run_cli, session_of
from tests.support.log_checks import assert_valid_log

THREADS = {"DSH_LOCAL_THREADS": "1"}
READ = ToolSchema(name="read", description="Read a file of the workspace",
                  parameters={"type": "object", "properties": {"file_path": {"type": "string"}},
                              "required": ["file_path"]})


def _workers() -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if "dsh_notebook.models.local_worker" in cmd and proc.ppid() == os.getpid():
            out.append(proc)
    return out


def _workers_marked(mark: str) -> list[psutil.Process]:
    """The llama.cpp workers alive whose environment carries ``DSH_TEST_MARK=mark`` (a run's own)."""
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if "dsh_notebook.models.local_worker" in (proc.info.get("cmdline") or []) and \
                    proc.environ().get("DSH_TEST_MARK") == mark:
                out.append(proc)
        except psutil.Error:
            pass
    return out


def _marked() -> dict[str, str]:
    return {**THREADS, "DSH_TEST_MARK": uuid.uuid4().hex}


async def test_a_plain_question_completes_and_the_window_comes_from_the_server(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOCAL_THREADS", "1")
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    try:
        assert await model.server_window() == 4096  # GET /props: the server's n_ctx
        request = ModelRequest(provider="local", model="smollm2", messages=[user_text("Say hello.")],
                               config={"max_tokens": 24, "temperature": 0})
        chunks = [c async for c in model.stream(request)]
        finish = chunks[-1]
        assert isinstance(finish, Finish) and finish.reason in ("stop", "max-tokens")
        assert any(isinstance(c, BlockEnd) and isinstance(c.block, TextBlock) for c in chunks)
        # a tool offered to a model whose template has none: the call comes from schema-constrained output
        ask = ModelRequest(provider="local", model="smollm2", messages=[user_text("Read the file notes.txt")],
                           tools=(READ,), config={"max_tokens": 48, "temperature": 0})
        chunks = [c async for c in model.stream(ask)]
        ends = [c.block for c in chunks if isinstance(c, BlockEnd)]
        finish = chunks[-1]
        assert isinstance(finish, Finish) and len(ends) <= 1
        if finish.reason == "tool-calls":
            assert isinstance(ends[0], ToolCallBlock) and ends[0].name == "read"
    finally:
        await model.aclose()
    assert model.server.proc is None and not _workers()  # type: ignore[attr-defined]


async def test_a_server_that_dies_is_a_coded_error_and_the_next_request_starts_a_new_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOCAL_THREADS", "1")
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    request = ModelRequest(provider="local", model="smollm2", messages=[user_text("Say hi.")],
                           config={"max_tokens": 8, "temperature": 0})
    try:
        assert isinstance([c async for c in model.stream(request)][-1], Finish)  # a kept-alive connection now
        first = model.server.proc  # type: ignore[attr-defined]
        first.kill()
        first.wait()
        with pytest.raises(ModelError) as caught:
            [c async for c in model.stream(request)]
        assert caught.value.code == "LOCAL_SERVER_FAILED" and caught.value.retryable
        assert "stopped during a request" in str(caught.value) and "status -9" in str(caught.value)
        assert isinstance([c async for c in model.stream(request)][-1], Finish)  # the Step's next attempt
        assert model.server.proc is not None and model.server.proc.pid != first.pid  # type: ignore[attr-defined]
    finally:
        await model.aclose()
    assert not _workers()


async def test_a_rambling_answer_is_cut_by_max_tokens() -> None:
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    try:
        request = ModelRequest(provider="local", model="smollm2",
                               messages=[user_text("Write a very long story about a dragon, at least 500 words.")],
                               config={"max_tokens": 8})
        chunks = [c async for c in model.stream(request)]
    finally:
        await model.aclose()
    finish = chunks[-1]
    assert isinstance(finish, Finish) and finish.reason == "max-tokens"


def test_run_on_the_local_model_ends_bounded_with_a_valid_log_and_no_process_left(tmp_path: Path) -> None:
    env = _marked()
    done = run_cli("run", "--model", "local:smollm2", "--approve", "deny", "--cwd", str(tmp_path),
                   "--max-tokens", "48", "--max-steps", "3", "Say hello in five words.",
                   home=tmp_path / "home", extra_env=env, timeout=280)
    assert done.returncode in (0, 1), done.stderr
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    assert end.reason.kind in ("completed", "max-tokens", "budget", "stuck")
    header = [e for e in events if isinstance(e, RequestHeader)][-1]
    assert header.config.get("max_tokens") == 48 and header.endpoint is not None
    assert not _workers_marked(env["DSH_TEST_MARK"])  # the server is gone with the run


def test_an_oversized_prompt_never_reaches_the_server_oversized(tmp_path: Path) -> None:
    big = " ".join(f"word{i}" for i in range(6000))  # well over the 4096-token window
    done = run_cli("run", "--model", "local:smollm2", "--approve", "deny", "--cwd", str(tmp_path),
                   "--max-tokens", "16", "--max-steps", "2", "--tools", "none", f"Summarise: {big}",
                   home=tmp_path / "home", extra_env=THREADS, timeout=280)
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    refused = [e for e in events if isinstance(e, (LlmRetry, AssistantAttempt)) and e.error is not None
               and e.error.status == 400]
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    server_refusals = refused + ([end] if end.reason.error is not None and end.reason.error.status == 400 else [])
    assert not server_refusals  # cut or ended CONTEXT_OVERFLOW by the harness, never refused by the server
    assert end.reason.error is None or end.reason.error.code == "CONTEXT_OVERFLOW"


def test_a_repeated_denied_call_ends_stuck_within_a_few_steps(tmp_path: Path) -> None:
    """``tool_choice=required`` leaves no text answer in the grammar: the model must call bash, which
    is denied each time (with whatever command it makes up); the no-progress guard ends the turn at
    the third call (every call answered)."""
    done = run_cli("run", "--model", "local:smollm2", "--approve", "deny", "--cwd", str(tmp_path),
                   "--tools", "bash", "--max-tokens", "48", "--max-steps", "6", "--option", "temperature=0",
                   "--option", "seed=1", "--option", "tool_choice=required", "Use the bash tool to run: echo hi",
                   home=tmp_path / "home", extra_env=THREADS, timeout=280)
    _sid, log = session_of(done.stdout)
    events = assert_valid_log(log)
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = {e.message.tool_call_id for e in events if isinstance(e, ToolResult)}
    end = [e for e in events if isinstance(e, TurnEnd)][-1]
    assert calls and all(c.name == "bash" for c in calls) and {c.call_id for c in calls} <= results
    # every call is denied, whatever command the model makes up: --max-repeats 2 (the default), the
    # third denial in a row ends the turn
    assert end.reason.kind == "stuck" and end.reason.cause == "bash" and len(calls) == 3


def test_a_multi_turn_session_compacts_before_overflow_and_goes_on(tmp_path: Path) -> None:
    """A small server window (DSH_LOCAL_CTX): the turns' prompts fill it; a compaction comes before any
    request the server would refuse, and the next turns go on in the same session."""
    env = {**_marked(), "DSH_LOCAL_CTX": "512", "DSH_COMPACT_THRESHOLD": "0.6"}
    # plain English (about 4 characters a token, as the estimate assumes): ~150 tokens a prompt, so
    # the 512-token window is past its threshold at turn 2 or 3 and each request is short to process
    filler = " ".join(["the team wrote down what they saw in the garden today and what to plant next week"] * 9)
    session: list[str] = []
    said = False  # run says when a compaction happened (on stderr, with the turn's progress)
    for turn in range(1, 6):
        done = run_cli("run", "--model", "local:smollm2", "--approve", "deny", "--cwd", str(tmp_path),
                       "--tools", "none", "--max-tokens", "16", "--option", "temperature=0", *session,
                       f"Note {turn}: {filler}. Reply OK.", home=tmp_path / "home", extra_env=env, timeout=280)
        sid, log = session_of(done.stdout)
        said = said or "context compacted" in done.stderr
        session = ["--session", sid]
        events = assert_valid_log(log)
        ends = [e for e in events if isinstance(e, TurnEnd)]
        assert len(ends) == turn and (ends[-1].reason.error is None), ends[-1].reason
        if any(isinstance(e, ContextCompacted) for e in events) and turn >= 2:
            compacted = [e for e in events if isinstance(e, ContextCompacted)]
            if compacted[0].turn is not None and compacted[0].turn < turn:
                break  # compacted in an earlier turn, and this later turn went on
    compacted = [e for e in events if isinstance(e, ContextCompacted)]
    assert compacted and compacted[0].trigger == "threshold"  # before the server refused anything
    assert compacted[0].tokens_after < compacted[0].tokens_before and said
    refused = [e for e in events if isinstance(e, (LlmRetry, AssistantAttempt)) and e.error is not None]
    assert not refused
    assert not _workers_marked(env["DSH_TEST_MARK"])  # the server is gone afterwards


def test_the_server_dies_with_a_parent_that_is_killed(tmp_path: Path) -> None:
    """SIGKILL of the process that started the server (no atexit, no close): the server's stdin
    pipe closes and it ends by itself, removing its private folder (socket, log) as it goes."""
    import signal
    import subprocess
    import sys

    script = (
        "import asyncio, sys\n"
        "from dsh_notebook.config import settings_from_env\n"
        "from dsh_notebook.models.routing import resolve_adapter\n"
        "model = resolve_adapter(settings_from_env(), 'local:smollm2')\n"
        "asyncio.run(model.server.ensure_started())\n"
        "print(model.server.proc.pid, model.server.channel.folder, flush=True)\n"
        "sys.stdin.read()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **THREADS}
    parent = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert parent.stdout is not None
        pid, folder = parent.stdout.readline().split()
        worker = psutil.Process(int(pid))
        assert Path(folder, "server.sock").exists()
        assert worker.is_running()
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    gone, alive = psutil.wait_procs([worker], timeout=60)
    assert not alive, "the llama.cpp server outlived its parent"
    assert not Path(folder).exists()
