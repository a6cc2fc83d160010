"""``python -m dsh_notebook run`` as a person and as a pipe see it (real subprocesses, scripted model).

At a terminal the answer is shown once (by the stream on stderr); piped, stdout carries it;
``--json`` is one object; ``--bogus`` is named; ``--help`` documents ``--quiet`` and ``--json``."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
FIX = "run the tests; if they fail fix src/math.ts; tell me the result"
ANSWER = "Result: the tests pass now"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "DSH_MODEL": "script:auto"}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return dsh("run", *args, env=env())


def test_at_a_terminal_the_answer_is_shown_once() -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "dsh_notebook", "run", FIX], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env(), start_new_session=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=120) == 0
    shown = b"".join(chunks).decode()
    assert shown.count(ANSWER) == 1, shown
    assert "→ bash node test/run.mjs" in shown and "session: s_" in shown


def test_piped_stdout_carries_the_answer_and_stderr_the_stream() -> None:
    done = run(FIX)
    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout and done.stdout.strip().splitlines()[-1].startswith("session: s_")
    assert ANSWER in done.stderr and "→ bash node test/run.mjs" in done.stderr  # the stream, as it happened
    quiet = run("--quiet", FIX)
    assert ANSWER in quiet.stdout and quiet.stderr == ""


def test_json_is_one_object_on_stdout() -> None:
    done = run("--json", FIX)
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)
    assert obj["completed"] is True and obj["reason"]["kind"] == "completed" and obj["turn"] == 1
    assert ANSWER in obj["answer"] and obj["sessionId"].startswith("s_") and Path(obj["logPath"]).is_file()
    assert "→ bash" not in done.stderr


@pytest.mark.parametrize("argv", [["--bogus"], ["--bogus", "--quiet"], ["--json", "--bogus=1"]])
def test_an_unknown_flag_is_named(argv: list[str]) -> None:
    done = run(*argv)
    assert done.returncode == 2
    unknown = [a for a in argv if a.startswith("--bogus")]
    assert f"[BAD_ARGS] python -m dsh_notebook run: unrecognized arguments: {' '.join(unknown)}" in done.stderr
    assert "required" not in done.stderr


def test_help_documents_quiet_and_json() -> None:
    done = run("--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--quiet no progress on stderr" in text and "--json print one JSON object on stdout" in text
    assert "the answer is shown once" in text
