"""Issue 39 on real kernels (the agent kernel ``dsh`` and IPython's ``python3`` with ``%dsh``),
driven through jupyter_client as a front end drives them, against the loopback model server that
records every request:

- a turn offers exactly ``--tools`` (``none``: no tool at all, the notebook's four included); an
  unknown name is ``BAD_TOOLS`` naming it; every request ends with the prompt;
- the agent kernel answers history ``tail``, ``range`` and ``search`` as IPython's kernel does;
- ``%dsh show`` / ``show --stats`` / ``changes`` display where they stand in a cell;
- a held first byte: the cell's display says "waiting for the model · 0 s" (its first second) and
  ticks, then the answer replaces it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply, text_chunks, text_reply
from tests.support.kernel_messages import iopub_until_idle, shell_reply

from .conftest import start_agent_kernel
from .test_agent_kernel import execute, run

pytestmark = pytest.mark.kernel

NOTEBOOK_TOOLS = {"inspect_var", "notebook_insert", "notebook_read", "python"}


@pytest.fixture(params=["dsh", "python3"])
def kernel(request: Any, fake_env: dict[str, str], tmp_path: Path) -> Any:
    """A running kernel of each kind on the loopback model (``python3`` with the extension loaded)."""
    if request.param == "dsh":
        km, kc = start_agent_kernel(fake_env, tmp_path)
    else:
        from jupyter_client.manager import start_new_kernel

        km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=fake_env)
        assert run(kc, "%load_ext dsh_notebook")[0]["content"]["status"] == "ok"
    try:
        yield request.param, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def prompt(kind: str, text: str, flags: str = "") -> str:
    """A prompt cell: the bare text in the agent kernel (flags on a %%dsh line), %dsh in python3."""
    if kind == "dsh":
        return f"%%dsh {flags}\n{text}" if flags else text
    return f"%dsh {flags} {text}".replace("  ", " ")


def offered(request: Any) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools", [])}


def test_a_turn_offers_exactly_its_tools_and_ends_with_the_prompt(
        kernel: tuple[str, Any], fake_server: FakeOpenAIServer) -> None:
    kind, kc = kernel
    fake_server.enqueue(text_reply("every tool"), text_reply("a plain chat"), text_reply("two tools"))
    assert run(kc, prompt(kind, "What can you do?"))[0]["content"]["status"] == "ok"
    assert NOTEBOOK_TOOLS <= offered(fake_server.requests[-1])  # all: the notebook's four with the built-ins
    # --tools none: a plain chat turn, nothing offered (the notebook's tools neither), no tool guidance
    assert run(kc, prompt(kind, "Say hello in five words.", "--tools none"))[0]["content"]["status"] == "ok"
    plain = fake_server.requests[-1]
    assert "tools" not in plain.body and offered(plain) == set()
    system = plain.messages[0]["content"]
    assert "Act through the tools" not in system and "notebook_insert" not in system
    assert plain.messages[-1] == {"role": "user", "content": "Say hello in five words."}  # the prompt is last
    assert run(kc, prompt(kind, "Read and run.", "--tools read,python"))[0]["content"]["status"] == "ok"
    assert offered(fake_server.requests[-1]) == {"read", "python"}
    assert fake_server.requests[-1].messages[-1] == {"role": "user", "content": "Read and run."}
    # a misspelt name: refused before anything is sent, naming it and the tools there are
    before = len(fake_server.requests)
    reply, shown = run(kc, prompt(kind, "hi", "--tools read,pyhton"))
    assert reply["content"]["status"] == "error" and "BAD_TOOLS" in shown
    assert "'pyhton'" in shown and "notebook_read" in shown and "python" in shown
    assert len(fake_server.requests) == before


def test_the_first_request_carries_the_runtime_context_before_the_prompt(
        kernel: tuple[str, Any], fake_server: FakeOpenAIServer) -> None:
    kind, kc = kernel
    fake_server.enqueue(text_reply("hello"))
    assert run(kc, prompt(kind, "Say hello.", "--tools none"))[0]["content"]["status"] == "ok"
    messages = fake_server.requests[-1].messages
    assert [m["role"] for m in messages] == ["system", "user", "user"]
    assert messages[1]["content"].startswith("Current runtime context.") and "Today's date" in messages[1]["content"]
    assert messages[2] == {"role": "user", "content": "Say hello."}


def _history(kc: Any, **kw: Any) -> list[Any]:
    msg_id = kc.history(**kw)
    reply = shell_reply(kc, msg_id, timeout=30)
    assert reply["content"]["status"] == "ok"
    return [list(h) for h in reply["content"]["history"]]


@pytest.fixture
def own_history_kernel(fake_env: dict[str, str], tmp_path: Path) -> Any:
    """An agent kernel with a history database of its own (``IPYTHONDIR``), as on a fresh machine."""
    km, kc = start_agent_kernel({**fake_env, "IPYTHONDIR": str(tmp_path / "ipython")}, tmp_path)
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_history_tail_range_and_search_as_ipython_answers_them(
        own_history_kernel: Any, fake_server: FakeOpenAIServer) -> None:
    kc = own_history_kernel
    fake_server.enqueue(text_reply("the answer"))
    cells = ["what is in README.md?", "%%python\nx = 41 + 1", "%dsh sessions"]
    for cell in cells:
        assert run(kc, cell)[0]["content"]["status"] == "ok"
    ranged = _history(kc, hist_access_type="range", raw=True, output=False, session=0, start=1, stop=4)
    assert ranged == [[0, 1, cells[0]], [0, 2, cells[1]], [0, 3, cells[2]]]
    assert _history(kc, hist_access_type="range", raw=True, output=False, session=0, start=2, stop=3) == [
        [0, 2, cells[1]]]
    with_output = _history(kc, hist_access_type="range", raw=True, output=True, session=0, start=1, stop=2)
    assert with_output[0][2][0] == cells[0] and "TurnResult completed" in with_output[0][2][1]
    tail = _history(kc, hist_access_type="tail", raw=True, output=False, n=3)
    assert [h[2] for h in tail] == cells
    session = tail[-1][0]  # the absolute session number, as a front end knows it from tail
    assert [h[2] for h in _history(kc, hist_access_type="range", raw=True, output=False, session=session,
                                   start=1, stop=4)] == cells
    found = _history(kc, hist_access_type="search", raw=True, output=False, pattern="*41 + 1*", n=10)
    assert [h[2] for h in found] == [cells[1]]
    assert [h[2] for h in _history(kc, hist_access_type="search", raw=True, output=False, pattern="what is*",
                                   n=10)] == [cells[0]]


def _displayed(msgs: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(m["content"]["data"]) for m in msgs if m["msg_type"] in ("display_data", "execute_result")]


def test_show_stats_and_changes_display_wherever_they_stand_in_a_cell(
        agent_env: dict[str, str], tmp_path: Path) -> None:
    """On the scripted model (its demo copy): a turn that edits a file, then one cell with
    ``show``, ``show --stats``, ``changes`` and ``show --inspect`` on lines that are not the last."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=agent_env)
    try:
        assert run(kc, "%load_ext dsh_notebook")[0]["content"]["status"] == "ok"
        fix = "%dsh run the tests; if they fail fix src/math.ts; tell me the result"
        assert run(kc, fix)[0]["content"]["status"] == "ok"
        cell = "\n".join(["%dsh show --no-widget", "%dsh show --stats", "%dsh changes", "%dsh show",
                          "%dsh show --inspect", "x = 1"])
        msg_id = execute(kc, cell)
        assert shell_reply(kc, msg_id)["content"]["status"] == "ok"
        shown = _displayed(iopub_until_idle(kc, msg_id))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert len(shown) == 5, shown
    listing, stats, diff, loop, inspector = shown
    assert "tool/call" in listing and "turn 1 completed" in listing
    assert "requests" in stats.lower() or "tokens" in stats.lower()
    assert "src/math.ts" in diff and "@@" in diff
    assert "application/vnd.jupyter.widget-view+json" in loop and "application/vnd.jupyter.widget-view+json" in inspector


def test_the_cell_says_it_waits_from_the_first_second_and_ticks(
        agent_kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    """A display client (the request names its cell): the turn's display gets "waiting for the model
    · 0 s" (shown within the attempt's first second), then 1 s, 2 s …, and the answer replaces it.
    The model's first byte is held until the test has seen the line tick."""
    _km, kc = agent_kernel
    hold = threading.Event()
    fake_server.enqueue(Reply(chunks=text_chunks("at last"), hold=hold))
    msg_id = execute(kc, "Say hello.", cell_id="cell-wait")
    seen: list[str] = []
    try:
        while not {"waiting for the model · 0 s", "waiting for the model · 2 s"} <= set(seen):
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            text = (msg["content"].get("data") or {}).get("text/plain", "")
            seen += [line.strip("[]") for line in text.splitlines() if "waiting for the model" in line]
    finally:
        hold.set()
    assert seen[0] == "waiting for the model · 0 s"  # its first showing: within the first second
    assert shell_reply(kc, msg_id)["content"]["status"] == "ok"
    last = [m for m in iopub_until_idle(kc, msg_id) if m["msg_type"] in ("display_data", "update_display_data")][-1]
    assert "at last" in last["content"]["data"]["text/plain"]
    assert "waiting for the model" not in last["content"]["data"]["text/plain"]
