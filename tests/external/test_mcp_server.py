"""Issue 41: external agents drive the notebook over MCP — each tool's happy path and its errors,
every call in the session in order, masked, decided by the session's mode, undoable.

A real Jupyter Server with the extension, real kernels, the official ``mcp`` SDK client over
streamable HTTP (``conftest.py``)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
from typing import Any

import pytest

from .conftest import CLIENT, SECRET, Kernel, Server, mcp_client, texts

pytestmark = [pytest.mark.integration, pytest.mark.kernel, pytest.mark.xdist_group("external-mcp")]

PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005"
    "0002ffa2f1b5b10000000049454e44ae426082")).decode()


def opened(server: Server, kernels: list[Kernel], *cells: str, mode: str | None = "auto") -> tuple[str, Kernel]:
    """A notebook open with a kernel that has loaded dsh (in ``mode``: ``auto`` lets calls run)."""
    name = server.notebook(*cells)
    kernel = server.open(name)
    kernels.append(kernel)
    if mode is not None:
        setting = "approve = 'auto'" if mode == "auto" else f"mode = {mode!r}"
        kernel.run(f"%load_ext dsh_notebook\n%config DshMagics.{setting}")
    return name, kernel


def of_type(events: list[dict[str, Any]], *kinds: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] in kinds]


async def test_tools_are_listed_and_list_notebooks_names_the_open_ones(server: Server, kernels: list[Kernel]) -> None:
    name, _ = opened(server, kernels, "x = 1")
    closed = server.notebook("y = 2")
    async with mcp_client(server) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert tools == {"list_notebooks", "read_notebook", "execute_code", "insert_cell", "edit_cell", "inspect_var",
                         "ask_agent", "session_events"}
        listed = texts(await mcp.call_tool("list_notebooks", {}))
    assert f"{name} · kernel python3" in listed
    assert f"{closed} · no kernel" in listed


async def test_read_notebook_by_cell_id_with_outputs_images_and_long_outputs_cut(server: Server, kernels: list[Kernel]) -> None:
    name, _ = opened(server, kernels, "#md # Title", "print('a')")
    nb = json.loads((server.root / name).read_text())
    nb["cells"][1]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": "HEAD" + "x" * 50_000 + "TAIL"},
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": PNG, "text/plain": "<Figure>"}},
    ]
    (server.root / name).write_text(json.dumps(nb))
    md_id, code_id = (c["id"] for c in nb["cells"])
    async with mcp_client(server) as mcp:
        whole = await mcp.call_tool("read_notebook", {"path": name})
        one = await mcp.call_tool("read_notebook", {"path": name, "cell_ids": [code_id]})
        unknown = await mcp.call_tool("read_notebook", {"path": name, "cell_ids": ["nope"]})
    text = texts(whole)
    assert not whole.is_error and f"── cell {md_id} [markdown]\n# Title" in text and f"── cell {code_id} [code]" in text
    assert "HEAD" in text and "TAIL" in text and "characters elided" in text and len(text) < 30_000
    images = [c for c in whole.content if c.type == "image"]
    assert [(i.mime_type, i.data) for i in images] == [("image/png", PNG)]
    assert md_id not in texts(one) and code_id in texts(one)
    assert unknown.is_error and texts(unknown).startswith("[UNKNOWN_CELL]")
    assert unknown.structured_content == {"error": {"code": "UNKNOWN_CELL", "message": texts(unknown)[15:]}}


async def test_execute_code_runs_in_the_live_kernel_and_every_call_is_in_the_session_in_order(
        server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "x = 41")
    kernel.run("x = 41")
    async with mcp_client(server) as mcp:
        ran = await mcp.call_tool("execute_code", {"path": name, "code": "y = x + 1\nprint('y is', y)\ny * 2"})
        failed = await mcp.call_tool("execute_code", {"path": name, "code": "1/0"})
    assert not ran.is_error and texts(ran) == "y is 42\n\n84"
    assert failed.is_error and "ZeroDivisionError" in texts(failed) and "[PYTHON_ERROR]" in texts(failed)
    assert kernel.run("print(y)").strip() == "42"  # the kernel's own namespace
    events = server.events(kernel.session_id())
    ext = of_type(events, "external/call", "external/result", "turn/start", "turn/end", "checkpoint/taken",
                  "checkpoint/changes", "approval/decided")
    assert [e["type"] for e in ext[:7]] == ["turn/start", "external/call", "approval/decided", "checkpoint/taken",
                                             "external/result", "checkpoint/changes", "turn/end"]
    call, result = ext[1], ext[4]
    assert call["tool"] == "execute_code" and call["client"] == CLIENT and call["mcpSessionId"] and call["turn"] == 1
    assert json.loads(call["arguments"]) == {"path": name, "code": "y = x + 1\nprint('y is', y)\ny * 2"}
    assert result["sourceEventSeqs"] == [call["seq"]] and result["callId"] == call["callId"]
    assert result["meta"]["status"] == "ok" and not result["isError"]
    second = of_type(events, "external/result")[1]
    assert second["isError"] and second["error"]["code"] == "PYTHON_ERROR"


async def test_a_secret_in_an_argument_and_an_output_is_masked_in_the_log_and_in_the_answer(
        server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass")
    async with mcp_client(server) as mcp:
        ran = await mcp.call_tool("execute_code", {"path": name, "code": f"k = '{SECRET}'\nprint(k)"})
    assert SECRET not in texts(ran) and "***" in texts(ran)
    assert kernel.run("print(k == __import__('os').environ['OPENAI_API_KEY'])").strip() == "True"  # ran as written
    log = (server.home / "sessions" / f"{kernel.session_id()}.jsonl").read_text()
    assert SECRET not in log and "external/call" in log


async def test_insert_and_edit_cell_by_id_with_provenance_in_the_saved_notebook(server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "a = 1", "b = 2")
    first, second = (c["id"] for c in server.cells(name))
    async with mcp_client(server) as mcp:
        inserted = await mcp.call_tool("insert_cell", {"path": name, "cell_id": first, "source": "c = 3"})
        new_id = inserted.content[0].text.split()[3]
        edited = await mcp.call_tool("edit_cell", {"path": name, "cell_id": second, "source": "b = 20",
                                                   "expected_source": "b = 2"})
        unknown = await mcp.call_tool("edit_cell", {"path": name, "cell_id": "missing", "source": "z"})
        stale = await mcp.call_tool("edit_cell", {"path": name, "cell_id": second, "source": "b = 200",
                                                  "expected_source": "b = 2"})
    assert not inserted.is_error and not edited.is_error
    cells = server.cells(name)
    assert [c["source"] for c in cells] == ["a = 1", "c = 3", "b = 20"]  # below its anchor; edited in place
    assert unknown.is_error and texts(unknown).startswith("[UNKNOWN_CELL]")
    assert stale.is_error and texts(stale).startswith("[EDIT_CONFLICT]")
    sid = kernel.session_id()
    calls = {e["callId"]: e for e in of_type(server.events(sid), "external/call")}
    for cell, tool in ((cells[1], "insert_cell"), (cells[2], "edit_cell")):
        prov = cell["metadata"]["dsh"]["provenance"]
        assert prov["client"] == CLIENT and prov["sessionId"] == sid and prov["tool"] == tool
        assert calls[prov["callId"]]["tool"] == tool
    assert cells[1]["id"] == new_id and "provenance" not in cells[0]["metadata"].get("dsh", {})


async def test_a_conflicting_save_between_read_and_write_writes_nothing(server: Server, kernels: list[Kernel]) -> None:
    name, _ = opened(server, kernels, "a = 1")
    cell = server.cells(name)[0]["id"]
    async with mcp_client(server) as mcp:
        read = texts(await mcp.call_tool("read_notebook", {"path": name}))
        assert "a = 1" in read
        nb = json.loads((server.root / name).read_text())
        nb["cells"][0]["source"] = "a = 'the person typed this'"  # the person saved meanwhile
        (server.root / name).write_text(json.dumps(nb))
        stale = await mcp.call_tool("edit_cell", {"path": name, "cell_id": cell, "source": "a = 2",
                                                  "expected_source": "a = 1"})
    assert stale.is_error and "[EDIT_CONFLICT]" in texts(stale)
    assert server.cells(name)[0]["source"] == "a = 'the person typed this'"


async def test_inspect_var_session_events_and_ask_agent(server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass")
    kernel.run("data = [1, 2, 3]")
    async with mcp_client(server) as mcp:
        described = await mcp.call_tool("inspect_var", {"path": name, "name": "data"})
        missing = await mcp.call_tool("inspect_var", {"path": name, "name": "nothing"})
        asked = await mcp.call_tool("ask_agent", {"path": name, "prompt": "hello"})
        events = await mcp.call_tool("session_events", {"path": name, "since_seq": -1})
    info = json.loads(texts(described))
    assert info["name"] == "data" and info["type"] == "list" and info["length"] == 3
    assert missing.is_error and texts(missing).startswith("[UNKNOWN_VARIABLE]")
    assert not asked.is_error and "offline demo model" in texts(asked)
    lines = [json.loads(x) for x in texts(events).splitlines()[1:]]
    kinds = [e["type"] for e in lines]
    first = kinds.index("external/call")
    assert lines[first]["tool"] == "inspect_var" and "user/message" in kinds[first:] and "assistant/message" in kinds
    calls = [e for e in lines if e["type"] == "external/call"]
    assert calls[-1]["tool"] == "session_events"  # this call itself is in the page
    assert [e["type"] for e in lines[lines.index(calls[-1]):]] == ["external/call", "approval/decided"]


async def test_calls_that_execute_or_write_are_refused_under_dont_ask_and_plan(server: Server, kernels: list[Kernel]) -> None:
    for mode in ("dont-ask", "plan"):
        name, kernel = opened(server, kernels, "a = 1", mode=mode)
        cell = server.cells(name)[0]["id"]
        async with mcp_client(server) as mcp:
            ran = await mcp.call_tool("execute_code", {"path": name, "code": "ran = True"})
            edit = await mcp.call_tool("edit_cell", {"path": name, "cell_id": cell, "source": "a = 2"})
            read = await mcp.call_tool("read_notebook", {"path": name})
        assert ran.is_error and texts(ran).startswith("[DENIED]") and f"mode {mode}" in texts(ran)
        assert ran.structured_content["error"]["code"] == "DENIED"
        assert edit.is_error and texts(edit).startswith("[DENIED]")
        assert not read.is_error  # reads run in every mode
        assert "NameError" in kernel.run("ran")  # nothing ran
        assert server.cells(name)[0]["source"] == "a = 1"
        decided = of_type(server.events(kernel.session_id()), "approval/decided")
        assert [(d["name"], d["decision"], d["mode"]) for d in decided[:2]] == [
            ("execute_code", "deny", mode), ("edit_cell", "deny", mode)]


async def test_an_approval_in_the_notebook_while_the_call_waits_with_progress(server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass", mode="default")
    said: list[str] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        said.append(message or "")

    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "approved = 1"},
                                                   progress_callback=progress))
        waiting = await _wait_for(lambda: any("waiting for a person to approve execute_code" in s for s in said))
        assert waiting and not call.done()
        sid = kernel.session_id()
        asked = of_type(server.events(sid), "approval/asked")
        assert [a["name"] for a in asked] == ["execute_code"]
        await asyncio.to_thread(kernel.approve, asked[0]["callId"])
        ran = await call
        refused_call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "refused = 1"}))
        await _wait_for(lambda: len(of_type(server.events(sid), "approval/asked")) == 2)
        await asyncio.to_thread(kernel.approve, of_type(server.events(sid), "approval/asked")[1]["callId"], "deny")
        refused = await refused_call
    assert not ran.is_error and kernel.run("print(approved)").strip() == "1"
    assert refused.is_error and texts(refused).startswith("[DENIED]") and "NameError" in kernel.run("refused")


async def test_undo_after_an_external_write_puts_the_notebook_back(server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "a = 1")
    before = (server.root / name).read_text()
    cell = server.cells(name)[0]["id"]
    async with mcp_client(server) as mcp:
        done = await mcp.call_tool("insert_cell", {"path": name, "cell_id": cell, "source": "b = 2"})
    assert not done.is_error and len(server.cells(name)) == 2
    said = kernel.run("%dsh undo")
    assert f"restore {name}" in said, said
    assert (server.root / name).read_text() == before


async def test_a_dead_kernel_is_reported_and_never_replaced_and_a_restarted_one_is_said_once(
        server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "a = 1")
    async with mcp_client(server) as mcp:
        assert not (await mcp.call_tool("execute_code", {"path": name, "code": "a = 2"})).is_error
        server.api(f"/api/kernels/{kernel.id}/restart", "POST")
        restarted = await mcp.call_tool("execute_code", {"path": name, "code": "a"})
        assert restarted.is_error and texts(restarted).startswith("[KERNEL_RESTARTED]")
        # the test's own client reconnects to the new kernel process (its IOPub subscription included)
        await asyncio.to_thread(kernel.ready_again)
        pid = int(kernel.run("import os; print(os.getpid())").strip())
        os.kill(pid, signal.SIGKILL)
        await _wait_for(lambda: not _alive(pid))
        dead = await mcp.call_tool("execute_code", {"path": name, "code": "a"})
        read = await mcp.call_tool("inspect_var", {"path": name, "name": "a"})
        # Jupyter lets a kernel with no restarts left go, its session with it: the notebook has no
        # kernel now, and the agent is still told its kernel died (not "no kernel", never a new one)
        await _wait_for(lambda: kernel.id not in {k["id"] for k in server.api("/api/kernels")})
        later = await mcp.call_tool("read_notebook", {"path": name})
        gone = await mcp.call_tool("execute_code", {"path": name, "code": "a"})
    assert dead.is_error and texts(dead).startswith("[KERNEL_DEAD]")
    assert read.is_error and texts(read).startswith("[KERNEL_DEAD]"), texts(read)
    for result in (later, gone):
        assert result.is_error and texts(result).startswith("[KERNEL_DEAD]"), texts(result)
    assert not _alive(pid)


def _sessions(server: Server) -> set[str]:
    return {p.stem for p in (server.home / "sessions").glob("*.jsonl")}


def _alive(pid: int) -> bool:
    """A process that has not exited (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def _wait_for(fn: Any, timeout: float = 120.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if fn():
            return True
        await asyncio.sleep(0.1)
    raise AssertionError("condition not met in time")


async def test_dsh_stop_ends_an_external_turn_waiting_for_approval(server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass", mode="default")
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "stopped = 1"}))
        await _wait_for(lambda: bool(kernel.session_id() != "None" and of_type(server.events(kernel.session_id()),
                                                                                "approval/asked")))
        said = await asyncio.to_thread(kernel.run, "%dsh stop")
        ended = await call
    assert ended.is_error and texts(ended).startswith("[EXTERNAL_CALL_ENDED]"), texts(ended)
    assert "NameError" in kernel.run("stopped")
    events = server.events(kernel.session_id())
    ends = of_type(events, "turn/end")
    assert ends[-1]["reason"]["kind"] == "aborted", said
    result = of_type(events, "external/result")[-1]
    assert result["error"]["code"] == "CANCELLED"


async def test_a_kernel_that_dies_while_a_call_waits_for_approval_ends_the_call_as_dead(
        server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass", mode="default")
    pid = int(kernel.run("import os; print(os.getpid())").strip())
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "never = 1"}))
        await _wait_for(lambda: bool(kernel.session_id() != "None" and of_type(server.events(kernel.session_id()),
                                                                                "approval/asked")))
        os.kill(pid, signal.SIGKILL)
        dead = await asyncio.wait_for(call, 120)
    assert dead.is_error and texts(dead).startswith("[KERNEL_DEAD]"), texts(dead)


async def test_a_client_that_cancels_a_call_waiting_for_approval_ends_its_external_turn(
        server: Server, kernels: list[Kernel]) -> None:
    """Claude Code's Esc: the MCP client cancels a call that waits for a person; the external turn
    ends (nothing ran, no approval left pending) and the notebook's session takes the next call."""
    name, kernel = opened(server, kernels, "pass", mode="default")
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "cancelled = 1"}))
        await _wait_for(lambda: bool(kernel.session_id() != "None" and of_type(server.events(kernel.session_id()),
                                                                                "approval/asked")))
        sid = await asyncio.to_thread(kernel.session_id)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await _wait_for(lambda: bool(of_type(server.events(sid), "turn/end")))
        second = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "after = 2"}))
        await _wait_for(lambda: len(of_type(server.events(sid), "approval/asked")) == 2)
        await asyncio.to_thread(kernel.approve, of_type(server.events(sid), "approval/asked")[1]["callId"])
        after = await second
    assert not after.is_error and kernel.run("print(after)").strip() == "2", texts(after)
    assert "NameError" in kernel.run("cancelled")
    events = server.events(sid)
    first_end = of_type(events, "turn/end")[0]
    assert first_end["reason"] == {"kind": "aborted", "cause": "client"}
    first = of_type(events, "external/result")[0]
    assert first["error"]["code"] == "CANCELLED" and "MCP client cancelled" in first["error"]["message"]
    assert of_type(events, "approval/decided")[0]["decision"] != "allow"  # the banner's question withdrawn


async def test_a_client_that_cancels_a_running_execute_code_interrupts_it_and_ends_the_turn(
        server: Server, kernels: list[Kernel]) -> None:
    name, kernel = opened(server, kernels, "pass")
    said: list[str] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        said.append(message or "")

    before = _sessions(server)
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool(
            "execute_code", {"path": name, "code": "import time\nprint('started')\nfor i in range(3000):\n    time.sleep(0.1)"},
            progress_callback=progress))
        await _wait_for(lambda: any(s.startswith("running (") and "started" in s for s in said))  # the loop runs
        (sid,) = _sessions(server) - before  # the one the call made (the kernel, busy, is not asked)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await _wait_for(lambda: bool(of_type(server.events(sid), "turn/end")))
        after = await mcp.call_tool("execute_code", {"path": name, "code": "print(i < 2999)"})
    assert not after.is_error and texts(after).strip() == "True", texts(after)  # interrupted, the kernel free
    events = server.events(sid)
    assert of_type(events, "turn/end")[0]["reason"] == {"kind": "aborted", "cause": "client"}
    assert of_type(events, "external/result")[0]["error"]["code"] == "CANCELLED"
