"""The CLI of the debugger and the trajectory (``show``, ``fork``, ``compare``, ``run --session
--model replay:…``) used the way a careless or hostile user uses it: every wrong input is a coded
``[CODE] message`` on stderr with exit 2, nothing is written to a log it should not touch, and
nothing hangs. Real ``python -m dsh_notebook`` subprocesses, the scripted model, logs on disk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.session.persistence import load_log
from dsh_notebook.testing.logs import LogBuilder
from dsh_notebook.wire.events import (
    ToolResult,
)
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def cli(home: Path, *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*args, env=env, timeout=timeout, cwd=cwd)


def refused(done: subprocess.CompletedProcess[str], code: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert f"[{code}]" in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, str, Path]:
    home = tmp_path / "home"
    done = cli(home, "run", "read README.md and summarise")
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    sid, _, path = last.removeprefix("session: ").partition(" log: ")
    return home, sid, Path(path)


def test_a_directory_or_a_fifo_is_named_for_what_it_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "logs").mkdir()
    os.mkfifo(tmp_path / "pipe")
    for command in (["show"], ["show", "--stats"], ["fork", "--at", "0"], ["compare", "logs"]):
        done = cli(home, command[0], "logs", *command[1:], cwd=tmp_path, timeout=60)
        refused(done, "LOG_NOT_FOUND")
        assert "logs is a directory" in done.stderr  # not "no session 'logs'"
    done = cli(home, "show", "pipe", cwd=tmp_path, timeout=60)  # never opened: no hang
    refused(done, "LOG_NOT_FOUND")
    assert "pipe is a FIFO" in done.stderr


def test_an_id_prefix_resolves_when_unique_and_is_refused_when_shared(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    twin = path.with_name(f"{sid[:6]}zzzzzz.jsonl")  # a second session sharing the first 6 characters
    twin.write_bytes(path.read_bytes())
    shown = cli(home, "show", sid[:9])
    assert shown.returncode == 0 and shown.stdout.startswith(f"session {sid} "), shown.stderr
    shared = cli(home, "fork", sid[:6], "--at", "0")
    refused(shared, "AMBIGUOUS_SESSION")
    assert sid in shared.stderr and twin.stem in shared.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == sorted([path.name, twin.name])  # no fork made


def test_bad_flags_are_coded_errors(origin: tuple[Path, str, Path]) -> None:
    home, sid, _ = origin
    for args in (["fork", sid, "--at", "abc"], ["fork", sid], ["fork", sid, "--at", "3", "--bogus"], []):
        done = cli(home, *args)
        refused(done, "BAD_ARGS")
        assert "usage:" in done.stderr
    for at in ("-1", "99999999999999999999"):
        refused(cli(home, "fork", sid, "--at", at), "BAD_FORK_POINT")


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "binary", "itself", "itself-by-path", "no-responses"])
def test_a_bad_replay_model_is_refused_before_the_prompt_is_logged(origin: tuple[Path, str, Path], kind: str) -> None:
    home, sid, path = origin
    tmp = path.parent.parent
    forked = cli(home, "fork", sid, "--at", "1")
    assert forked.returncode == 0, forked.stderr
    fork_id, _, fork_log = forked.stdout.strip().removeprefix("session: ").partition(" log: ")
    (tmp / "adir").mkdir(exist_ok=True)
    if not (tmp / "afifo").exists():
        os.mkfifo(tmp / "afifo")
    (tmp / "binary.jsonl").write_bytes(bytes(range(256)) * 8)
    silent = cli(home, "fork", sid, "--at", "0")  # a session that never got a model response
    assert silent.returncode == 0, silent.stderr
    target, code = {
        "missing": ("s_nope00000000", "LOG_NOT_FOUND"),
        "directory": (str(tmp / "adir"), "LOG_NOT_FOUND"),
        "fifo": (str(tmp / "afifo"), "LOG_NOT_FOUND"),  # was: the run blocked for ever opening it
        "binary": (str(tmp / "binary.jsonl"), "LOG_CORRUPT"),  # was: a traceback, error UNKNOWN
        "itself": (fork_id, "BAD_MODEL"),
        "itself-by-path": (fork_log, "BAD_MODEL"),
        "no-responses": (silent.stdout.split()[1], "REPLAY_DIVERGED"),  # was: the prompt logged, then the turn failed
    }[kind]
    before = Path(fork_log).read_bytes()
    done = cli(home, "run", "--session", fork_id, "--model", f"replay:{target}", "hi", timeout=60)
    refused(done, code)
    assert Path(fork_log).read_bytes() == before  # no prompt, no failed turn appended
    again = cli(home, "run", "--session", fork_id, "--model", f"replay:{sid}", "read README.md and summarise")
    assert "SESSION_BUSY" not in again.stderr  # the refused resume released the writer lock


def _log(path: Path, turns: int, *, chained: bool, odd_turn: int | None = None) -> Path:
    """``turns`` turns of prompt → request → tool call → result → request → answer, written by the
    real Session and SessionLog; ``chained``: requests extend the previous one (``baseRequestSeq``),
    else each lists its whole history; ``odd_turn``: that turn's tool result says something else."""
    with LogBuilder(path.stem, cwd="/workspace/demo", path=path) as b:
        for turn in range(1, turns + 1):
            b.file_turn(chained=chained, result="something else" if turn == odd_turn else None)
    return path


@pytest.mark.scale
def test_compare_of_huge_logs_is_exact_and_finishes(tmp_path: Path) -> None:
    """Two 30,000-event sessions (one chaining its requests, one listing the whole history each
    time) with one tool result changed near the end: the comparison names that result. Before,
    every request's whole history was materialised and dumped (quadratic): it did not finish."""
    turns = 2_500  # 12 events a turn
    a = _log(tmp_path / "s_big_a.jsonl", turns, chained=True)
    b = _log(tmp_path / "s_big_b.jsonl", 600, chained=False, odd_turn=590)  # flat logs grow quadratically
    a_short = _log(tmp_path / "s_big_c.jsonl", 600, chained=True)
    same = cli(tmp_path / "home", "compare", str(a), str(a), "--json", timeout=300)
    assert same.returncode == 0, same.stderr
    got = json.loads(same.stdout)
    assert got["divergence"] is None and len(got["steps"]) == 2 * turns and all(s["same"] for s in got["steps"])
    flat = cli(tmp_path / "home", "compare", str(a_short), str(b), "--json", timeout=300)
    assert flat.returncode == 0, flat.stderr
    d = json.loads(flat.stdout)["divergence"]
    odd = next(e for e in load_log(b).events if isinstance(e, ToolResult) and e.message.text == "something else")
    assert (d["what"], d["turn"], d["step"], d["b"]["seq"]) == ("request", 590, 2, odd.seq)
    assert any("something else" in line for line in d["diff"])
    assert sum(s["same"] for s in json.loads(flat.stdout)["steps"]) == 2 * 589 + 1  # chained == flat up to there


def test_export_html_never_writes_its_page_over_a_session_log(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    before = path.read_bytes()
    for output in (str(path), sid + ".jsonl"):  # the log itself, by path and relative to the store
        done = cli(home, "export-html", sid, "-o", output, cwd=path.parent)
        refused(done, "OUTPUT_IS_A_LOG")  # was: the page replaced the session's only record
    assert path.read_bytes() == before and load_log(path).id == sid


def test_junk_in_the_store_does_not_hang_or_break_listing_and_search(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    store = path.parent
    (store / "s_bin00000000.jsonl").write_bytes(bytes(range(256)) * 4)
    (store / "s_dir00000000.jsonl").mkdir()
    os.mkfifo(store / "s_fifo0000000.jsonl")  # opening it for reading would block for ever
    (store / "s_empty000000.jsonl").write_bytes(b"")
    listed = cli(home, "sessions", timeout=60)
    assert listed.returncode == 0 and sid in listed.stdout, listed.stderr
    found = cli(home, "sessions", "--search", "README", timeout=60)  # was: SEARCH_INDEX (a directory) or a hang (a FIFO)
    assert found.returncode == 0 and found.stdout.startswith(sid), found.stderr
    fifo = cli(home, "show", "s_fifo0000000", timeout=60)
    refused(fifo, "LOG_NOT_FOUND")
    assert "is a FIFO" in fifo.stderr


def test_an_empty_prompt_is_refused_before_a_session_is_made(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for prompt in ("", "   ", "\n\t"):
        done = cli(home, "run", prompt, timeout=60)
        assert done.returncode == 2 and "[EMPTY_CONTENT]" in done.stderr, done.stderr
    assert list(home.glob("sessions/*.jsonl")) == []  # was: one empty session per refused prompt
