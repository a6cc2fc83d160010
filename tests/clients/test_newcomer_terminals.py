"""Issue 39 at a terminal, in a pseudo-terminal (pexpect), on real processes:

- ``exit`` / ``quit`` alone end ``jupyter console --kernel dsh`` (the reply's ``ask_exit``), as in
  IPython — not a prompt to the agent;
- while the model holds its first byte, ``jupyter console`` (both kernels), terminal IPython and
  ``run`` show "waiting for the model · 0 s" (so within the first second), rewritten in place as it
  ticks, and wiped when the answer comes.

The loopback model server holds its reply until the test has seen the line tick: what is asserted
is what the terminal received, never how long anything took.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer, Reply, text_chunks

from .conftest import BIN, REPO
from .test_console import PROMPT, Console, strip

pexpect = pytest.importorskip("pexpect")

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

WAITING = "waiting for the model · {} s"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def model_env(client_env: dict[str, str], server: FakeOpenAIServer) -> dict[str, str]:
    return {**client_env, "DSH_MODEL": "openai:fake-model", "DSH_BASE_URL": server.base_url,
            "DSH_API_KEY": str(server.api_key)}


@pytest.mark.parametrize("word", ["exit", "quit"])
def test_exit_or_quit_alone_leaves_the_agent_console(client_env: dict[str, str], tmp_path: Path,
                                                     isolated_dsh_home: Path, word: str) -> None:
    con = Console("dsh", client_env, str(tmp_path))
    try:
        con.send(word)
        con.child.expect(pexpect.EOF, timeout=60)  # the console ended (and shut its kernel down)
    finally:
        con.child.close(force=True)
    assert not list(isolated_dsh_home.glob("sessions/*.jsonl"))  # the word never went to an agent


def held_reply(hold: threading.Event, text: str = "at last, the answer") -> Reply:
    return Reply(chunks=text_chunks(text), hold=hold)


def see_waiting_tick(child: Any, hold: threading.Event) -> str:
    """Expect the waiting line's first showing (0 s), then its ticks to 2 s — each rewritten in place
    on the same line — then let the model go. Returns what the terminal received before the line."""
    try:
        child.expect_exact(WAITING.format(0))  # the first text shown: in the attempt's first second
        before = str(child.before)
        for second in (1, 2):
            child.expect_exact(WAITING.format(second))
            between = str(child.before)
            assert between.endswith("\r") and "\n" not in between, repr(between)  # in place, same line
    finally:
        hold.set()
    return before


WIPED = re.compile(r"\r {20,}\r")  # the line overwritten with spaces, the cursor back at its start


@pytest.mark.parametrize("kernel", ["dsh", "python3"])
def test_jupyter_console_shows_the_waiting_line_at_once_and_it_ticks_in_place(
        model_env: dict[str, str], server: FakeOpenAIServer, tmp_path: Path, kernel: str) -> None:
    hold = threading.Event()
    server.enqueue(held_reply(hold))
    con = Console(kernel, model_env, str(tmp_path))
    try:
        if kernel == "python3":
            con.run("%load_ext dsh_notebook")
        con.send("Say hello." if kernel == "dsh" else "%dsh Say hello.")
        before = see_waiting_tick(con.child, hold)
        assert "waiting for the model" not in before  # nothing of it before its first showing
        con.child.expect(PROMPT)
        rest = con.child.before
    finally:
        hold.set()
        con.close()
    assert "at last, the answer" in strip(rest), rest
    wiped = WIPED.search(rest)
    assert wiped is not None and wiped.end() <= rest.index("at last"), repr(rest)  # wiped before the answer


def test_terminal_ipython_shows_the_waiting_line_at_once_and_it_ticks(
        model_env: dict[str, str], server: FakeOpenAIServer, tmp_path: Path) -> None:
    hold = threading.Event()
    server.enqueue(held_reply(hold))
    child = pexpect.spawn(str(BIN / "ipython"), ["--simple-prompt", "--no-banner", "--no-confirm-exit",
                                                 "--colors=NoColor"],
                          env=model_env, cwd=str(tmp_path), encoding="utf-8", timeout=120, dimensions=(50, 400))
    try:
        child.expect(PROMPT)
        child.sendline("%load_ext dsh_notebook")
        child.expect(PROMPT)
        child.sendline("%dsh Say hello.")
        see_waiting_tick(child, hold)
        child.expect(PROMPT)
        rest = str(child.before)
        assert "at last, the answer" in strip(rest)
        wiped = WIPED.search(rest)
        assert wiped is not None and wiped.end() <= rest.index("at last"), repr(rest)
        child.sendline("exit")
        child.expect(pexpect.EOF, timeout=60)
    finally:
        hold.set()
        child.close(force=True)


def test_run_at_a_terminal_shows_the_waiting_line_at_once_and_it_ticks(
        model_env: dict[str, str], server: FakeOpenAIServer, tmp_path: Path) -> None:
    hold = threading.Event()
    server.enqueue(held_reply(hold))
    child = pexpect.spawn(sys.executable, ["-m", "dsh_notebook", "run", "--cwd", str(tmp_path), "Say hello."],
                          env={**model_env, "PYTHONPATH": str(REPO)}, cwd=str(tmp_path), encoding="utf-8",
                          timeout=120, dimensions=(50, 400))
    try:
        see_waiting_tick(child, hold)
        child.expect(pexpect.EOF)
        rest = child.before
    finally:
        hold.set()
        child.close(force=True)
    assert child.exitstatus == 0 and "at last, the answer" in rest
    wiped = WIPED.search(rest)
    assert wiped is not None and wiped.end() <= rest.index("at last"), repr(rest)
    assert re.search(r"session: s_\w+ log: ", rest)
