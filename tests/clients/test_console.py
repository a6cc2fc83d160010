"""``jupyter console`` on both kernels, in a pseudo-terminal: what a person at a terminal sees.

Terminal clients never draw ``update_display_data``; the turn's text and tool lines must reach
them anyway (``output = "auto"`` picks the stream for a client whose execute request names no
cell and allows stdin). Each test drives the real ``jupyter console`` with pexpect (simple prompt,
``TERM=dumb``) against a real kernel on the scripted model: a prompt with tools, an approval
answered on stdin, and an interrupt (Ctrl-C at the approval question: the console forwards it to
the kernel, the turn ends aborted, the next prompt works).
"""

from __future__ import annotations

import platform
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import BIN

pexpect = pytest.importorskip("pexpect")

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

FIX = "run the tests; if they fail fix src/math.ts; tell me the result"
PROMPT = re.compile(r"In \[(\d+)\]: ")
ASK = re.compile(r"dsh: allow bash .*\[y/N/a: [^\]]*\] ")
# how a thread waits for its terminal (fd 0): read(0, …), or select/pselect6 with nfds 1, or
# poll/ppoll of one descriptor (readline's callback mode) — syscall number: the argument to check
TERMINAL_WAITS = {
    "x86_64": {0: (1, 0), 23: (1, 1), 270: (1, 1), 7: (2, 1), 271: (2, 1)},
    "aarch64": {63: (1, 0), 72: (1, 1), 73: (2, 1)},
}[platform.machine()]  # {number: (argument index, its value)}


class Console:
    """One ``jupyter console`` process; ``run(code)`` sends a cell and returns what it printed."""

    def __init__(self, kernel: str, env: dict[str, str], cwd: str) -> None:
        self.child = pexpect.spawn(str(BIN / "jupyter-console"),
                                   [f"--kernel={kernel}", "--ZMQTerminalInteractiveShell.simple_prompt=True",
                                    "--no-confirm-exit"],
                                   env=env, cwd=cwd, encoding="utf-8", timeout=120, dimensions=(50, 400))
        self.child.expect(PROMPT)

    def send(self, code: str) -> None:
        self.child.sendline(code)

    def until_prompt(self) -> str:
        self.child.expect(PROMPT)
        return strip(self.child.before)

    def run(self, code: str) -> str:
        self.send(code)
        return self.until_prompt()

    def interrupt_when_reading(self, timeout: float = 120) -> None:
        """Ctrl-C once the console's main thread is blocked reading its terminal (fd 0).

        The question on screen does not say the read has begun: ``input()`` writes the prompt,
        then calls ``read(2)``. A SIGINT that lands between the two only sets CPython's flag (the
        handler runs when the read returns) and the read then waits for a key that never comes
        — a test that sends Ctrl-C as soon as it sees the prompt hangs whenever the console is
        descheduled there (under load). So wait for the state: the thread blocked in the system
        call that waits for the terminal (``/proc/PID/syscall``), which a signal interrupts."""
        syscall = Path(f"/proc/{self.child.pid}/syscall")
        deadline = time.monotonic() + timeout
        while True:
            fields = syscall.read_text().split()  # "running", or the number then the arguments
            wait = TERMINAL_WAITS.get(int(fields[0])) if fields[0].isdigit() else None
            if wait is not None and int(fields[wait[0]], 16) == wait[1]:
                break
            assert time.monotonic() < deadline, f"the console never read its terminal: {fields}"
            time.sleep(0.01)
        self.child.sendintr()

    def close(self) -> None:
        if self.child.isalive():
            self.child.sendeof()  # Ctrl-D: the console shuts its kernel down and exits
            self.child.expect(pexpect.EOF, timeout=60)
        self.child.close(force=True)


def strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")


@pytest.fixture(params=["python3", "dsh"])
def console(request: Any, client_env: dict[str, str], tmp_path: Any) -> Iterator[tuple[str, Console]]:
    con = Console(request.param, client_env, str(tmp_path))
    if request.param == "python3":
        con.run("%load_ext dsh_notebook")
    try:
        yield request.param, con
    finally:
        con.close()


def prompt_cell(kernel: str, text: str) -> str:
    """A prompt as a person types it: ``%dsh …`` on python3, the bare text in the agent kernel."""
    return f"%dsh {text}" if kernel == "python3" else text


def assert_in_order(text: str, *parts: str) -> None:
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} not after position {at} in:\n{text}"
        at = found + len(part)


def test_a_prompt_shows_its_text_and_tool_lines_in_order(console: tuple[str, Console]) -> None:
    kernel, con = console
    out = con.run(prompt_cell(kernel, FIX))
    assert_in_order(out, "I'll run the tests first.", "→ bash node test/run.mjs", "✗ exit 1",
                    "→ read src/math.ts", "→ edit", "✓ Edited src/math.ts", "→ bash node test/run.mjs",
                    "✓ exit 0", "Result: the tests pass now", "<TurnResult completed")
    assert out.count("Result: the tests pass now") == 1, out  # shown once (the TurnResult is one line)


def test_an_approval_is_answered_on_the_console_stdin(console: tuple[str, Console]) -> None:
    kernel, con = console
    con.run('%config DshMagics.approve = "ask"')
    con.send(prompt_cell(kernel, FIX))
    con.child.expect(ASK)
    shown = strip(con.child.before)
    assert_in_order(shown, "I'll run the tests first.", "→ bash node test/run.mjs")
    con.send("a")  # allow `node …` for the rest of the session
    con.child.expect(re.compile(r"dsh: allow edit .*\] "))
    con.send("y")
    out = con.until_prompt()
    assert_in_order(out, "✓ Edited src/math.ts", "✓ exit 0", "Result: the tests pass now", "<TurnResult completed")


def test_an_interrupt_at_the_question_aborts_the_turn_and_the_next_prompt_works(
        console: tuple[str, Console]) -> None:
    kernel, con = console
    con.run('%config DshMagics.approve = "ask"')
    con.send(prompt_cell(kernel, FIX))
    con.child.expect(ASK)
    con.interrupt_when_reading()
    out = con.until_prompt()
    assert "INTERRUPTED" in out and "aborted" in out, out
    again = con.run(prompt_cell(kernel, "read README.md and summarise"))
    assert_in_order(again, "→ read README.md", "<TurnResult completed")
