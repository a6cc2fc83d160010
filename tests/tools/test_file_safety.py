"""Issue 16, file tools: FIFOs froze the host in ``open()``, ``(a|aa)*c`` held the GIL in
``grep``, hard links led outside the workspace, a big file without newlines used ~2× its size.
Real files, FIFOs, sockets and hard links; real sessions on a real Host for the freeze."""

from __future__ import annotations

import asyncio
import os
import socket
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.host.host import Host
from dsh_notebook.tools import ToolRuntime
from dsh_notebook.wire.events import ToolResult
from tests.host.fixtures import client, host, models
from tests.host.support import HoldModel, Models, ToolModel, events_of
from tests.support.tasks import LoopTurns
from tests.tools.helpers import call

__all__ = ["client", "host", "models"]
MakeRuntime = Callable[..., ToolRuntime]
REDOS = "(a|aa)*c"


@pytest.fixture
def fifo(ws: Path) -> Path:
    path = ws / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("tool", "args"),
    [("read", {"file_path": "pipe"}), ("write", {"file_path": "pipe", "content": "x"}),
     ("edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"}), ("grep", {"pattern": "x", "path": "pipe"})],
)
async def test_a_fifo_is_refused_by_every_file_tool(make_runtime: MakeRuntime, fifo: Path, tool: str, args: dict[str, object]) -> None:
    out = await make_runtime().run(call(tool, args))
    assert out.is_error and out.code == "SPECIAL_FILE", out.text
    assert "FIFO" in out.text


@pytest.mark.timeout(60)
async def test_a_fifo_with_a_reader_is_still_refused_for_writing(make_runtime: MakeRuntime, fifo: Path) -> None:
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # now an O_WRONLY open would succeed
    try:
        out = await make_runtime().run(call("write", {"file_path": "pipe", "content": "x"}))
    finally:
        os.close(reader)
    assert out.code == "SPECIAL_FILE"


async def test_a_socket_is_refused(make_runtime: MakeRuntime, ws: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(ws / "sock"))
        out = await make_runtime().run(call("read", {"file_path": "sock"}))
    assert out.code == "SPECIAL_FILE"


@pytest.mark.parametrize(
    ("tool", "args"),
    [("read", {"file_path": "link.txt"}), ("write", {"file_path": "link.txt", "content": "pwned"}),
     ("edit", {"file_path": "link.txt", "old_string": "outside", "new_string": "pwned"}),
     ("grep", {"pattern": "outside", "path": "link.txt"})],
)
async def test_hard_links_are_refused(make_runtime: MakeRuntime, ws: Path, tmp_path: Path, tool: str, args: dict[str, object]) -> None:
    target = tmp_path / "outside.txt"
    target.write_text("outside secret\n")
    os.link(target, ws / "link.txt")
    out = await make_runtime(policy_mode="auto").run(call(tool, args))
    assert out.is_error and out.code == "HARD_LINK", out.text
    assert "hard link" in out.text
    assert target.read_text() == "outside secret\n" and "outside secret" not in out.text


async def test_grep_of_a_directory_skips_and_reports_special_and_linked_files(
    make_runtime: MakeRuntime, ws: Path, tmp_path: Path, fifo: Path
) -> None:
    (tmp_path / "outside.txt").write_text("needle outside\n")
    os.link(tmp_path / "outside.txt", ws / "link.txt")
    (ws / "plain.txt").write_text("needle inside\n")
    out = await make_runtime().run(call("grep", {"pattern": "needle"}))
    assert not out.is_error
    assert "plain.txt:1: needle inside" in out.text and "outside" not in out.text
    assert "[1 hard-linked files skipped]" in out.text


async def test_grep_is_linear_time_and_leaves_the_loop_free(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "a.txt").write_text("a" * 200_000 + "\n")
    async with LoopTurns() as turns:
        out = await make_runtime().run(call("grep", {"pattern": REDOS, "path": "a.txt"}))
    assert not out.is_error and out.text.startswith("No matches for '(a|aa)*c'")
    assert turns.count > 0  # the loop ran other work while grep searched


async def test_grep_says_backreferences_and_lookaround_are_unsupported(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "a.txt").write_text("aa\n")
    for pattern in (r"(a)\1", "a(?=a)"):
        out = await make_runtime().run(call("grep", {"pattern": pattern}))
        assert out.code == "INVALID_PATTERN" and "backreferences" in out.text and "lookaround" in out.text


async def test_python_like_patterns_still_work(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "m.py").write_text("def foo(x):\n    return x\nclass Bar:\n")
    out = await make_runtime().run(call("grep", {"pattern": r"^(def|class)\s+(?P<name>\w+)"}))
    assert out.text == "m.py:1: def foo(x):\nm.py:3: class Bar:"


async def test_a_huge_line_is_read_in_bounded_memory(make_runtime: MakeRuntime, ws: Path) -> None:
    size = 40_000_000
    with (ws / "big.txt").open("wb") as fh:
        for _ in range(size // 1_000_000):
            fh.write(b"x" * 1_000_000)
        fh.write(b"\nsecond line\n")
    runtime = make_runtime()
    tracemalloc.start()
    try:
        out = await runtime.run(call("read", {"file_path": "big.txt"}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not out.is_error
    assert "[line truncated]" in out.text and "     2\tsecond line" in out.text and "(big.txt: 2 lines)" in out.text
    assert peak < 4_000_000, f"peak {peak} bytes for a {size}-byte line"


async def test_line_counts_and_windows_are_unchanged(make_runtime: MakeRuntime, ws: Path) -> None:
    (ws / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)) + "tail without newline")
    out = await make_runtime().run(call("read", {"file_path": "f.txt", "offset": 3, "limit": 2}))
    assert out.text == "     3\tline 3\n     4\tline 4\n\n(f.txt: showing lines 3-4 of 11; use offset and limit to read other parts)"
    whole = await make_runtime().run(call("read", {"file_path": "f.txt"}))
    assert whole.text.endswith("    11\ttail without newline\n\n(f.txt: 11 lines)")


@pytest.mark.timeout(120)
def test_fifo_and_redos_answer_with_coded_errors_while_another_session_streams(
    host: Host, client: DshClient, models: Models, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "pipe")
    (ws / "a.txt").write_text("a" * 100_000 + "\n")
    hold = models.fakes["hold"] = HoldModel()
    models.fakes["tools"] = ToolModel([
        ("read", {"file_path": "pipe"}), ("write", {"file_path": "pipe", "content": "x"}),
        ("edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"}), ("grep", {"pattern": REDOS}),
    ])
    streaming = client.create_session(model="fake:hold", cwd=str(ws)).session_id
    follow = client.follow(streaming)
    streaming_rid = client.prompt("talk", streaming).request_id
    follow.wait(lambda m: m.streaming_text() == "held ", timeout=20)  # session 1 is mid-stream
    attacked = client.create_session(model="fake:tools", cwd=str(ws), approve="deny").session_id
    outcome = client.run("touch the pipe", attacked, timeout=60)
    assert outcome.completed
    results = {e.message.tool_call_id: e for e in events_of(host, attacked) if isinstance(e, ToolResult)}
    assert {k: (r.error.code if r.error else None) for k, r in results.items()} == {
        "t1": "SPECIAL_FILE", "t2": "DENIED", "t3": "DENIED", "t4": None}
    assert "No matches" in results["t4"].message.text
    hold.release.set()  # session 1 was never frozen: it finishes its stream
    assert follow.wait_turn_end(streaming_rid, timeout=30).completed
    follow.close()


@pytest.mark.timeout(120)
def test_write_and_edit_on_a_fifo_under_auto_answer_too(host: Host, client: DshClient, models: Models, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "pipe")
    models.fakes["tools"] = ToolModel([("write", {"file_path": "pipe", "content": "x"}),
                                       ("edit", {"file_path": "pipe", "old_string": "a", "new_string": "b"})])
    sid = client.create_session(model="fake:tools", cwd=str(ws), approve="auto").session_id
    assert client.run("write the pipe", sid, timeout=60).completed
    codes = [e.error.code for e in events_of(host, sid) if isinstance(e, ToolResult) and e.error]
    assert codes == ["SPECIAL_FILE", "SPECIAL_FILE"]


async def test_a_cancelled_file_operation_stops_its_thread() -> None:
    from dsh_notebook.errors import ToolError
    from dsh_notebook.tools.builtin.safe_io import Cancel, run_io

    started, stopped = asyncio.Event(), []
    loop = asyncio.get_running_loop()

    def slow(cancel: Cancel) -> None:
        loop.call_soon_threadsafe(started.set)
        try:
            while True:
                cancel.check()
        except ToolError as exc:
            stopped.append(exc.code)
            loop.call_soon_threadsafe(done.set)
            raise

    done = asyncio.Event()
    task = asyncio.ensure_future(run_io(slow))
    await started.wait()
    task.cancel()  # what a tool timeout or a SIGINT-driven cancel does
    with pytest.raises(asyncio.CancelledError):
        await task
    await done.wait()
    assert stopped == ["TIMED_OUT"]


async def test_grep_has_its_own_deadline(make_runtime: MakeRuntime, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_notebook.tools.builtin import search

    (ws / "a.txt").write_text("needle\n")
    monkeypatch.setattr(search, "GREP_TIMEOUT_S", -1.0)
    out = await make_runtime().run(call("grep", {"pattern": "needle"}))
    assert out.code == "TIMED_OUT" and "grep stopped" in out.text
