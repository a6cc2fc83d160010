"""``fork ID --at SEQ``, ``--model replay:<origin id>`` and ``compare A B``, driven as a user
drives them: real ``python -m dsh_notebook`` subprocesses, the scripted model on a copy of the
demo workspace, real tools, the logs on disk."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.session.persistence import load_log
from dsh_notebook.wire.events import (
    SessionForked,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserMessageEvent,
)
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
READ = "read README.md and summarise"
FIX = "run the tests; if they fail fix src/math.ts; tell me the result"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*args, env=env, timeout=120)


def session_line(out: str) -> tuple[str, Path]:
    last = out.strip().splitlines()[-1]
    assert last.startswith("session: s_") and " log: " in last, out
    sid, _, path = last.removeprefix("session: ").partition(" log: ")
    return sid, Path(path)


@pytest.fixture
def origin(tmp_path: Path) -> tuple[Path, str, Path]:
    """A two-turn session: the read-and-summarise prompt, then the run-the-tests prompt."""
    home = tmp_path / "home"
    first = cli(home, "run", READ)
    assert first.returncode == 0, first.stderr
    sid, path = session_line(first.stdout)
    second = cli(home, "run", "--session", sid, FIX)
    assert second.returncode == 0, second.stderr
    return home, sid, path


def test_fork_inside_a_turn_repeats_the_events_and_closes_what_was_open(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    events = load_log(path).events
    call = next(e for e in events if isinstance(e, ToolCall))  # its result comes after it
    done = cli(home, "fork", sid, "--at", str(call.seq))
    assert done.returncode == 0, done.stderr
    fork_id, fork_path = session_line(done.stdout)
    assert fork_id != sid and fork_path.parent == path.parent
    origin_lines = path.read_text().splitlines()
    fork_lines = fork_path.read_text().splitlines()
    assert fork_lines[1 : call.seq + 2] == origin_lines[1 : call.seq + 2]  # events 0..SEQ, byte for byte
    header = json.loads(fork_lines[0])
    assert header["id"] == fork_id and header["cwd"] == json.loads(origin_lines[0])["cwd"]
    tail = load_log(fork_path).events[call.seq + 1 :]
    result = tail[0]
    assert isinstance(result, ToolResult) and result.message.tool_call_id == call.call_id
    assert result.error is not None and result.error.code == "FORKED_BEFORE_RESULT"
    assert result.source_event_seqs == (call.seq,) and result.message.is_error
    assert [e.type for e in tail[1:]] == ["step/end", "turn/end", "session/forked"]
    end = tail[2]
    assert isinstance(end, TurnEnd) and end.reason.kind == "interrupted" and end.reason.cause == "fork"
    forked = tail[3]
    assert isinstance(forked, SessionForked) and (forked.from_, forked.at) == (sid, call.seq)
    assert json.loads(fork_lines[-1])["from"] == sid  # the wire name is "from"
    messages = cli(home, "show", "--messages", fork_id)
    assert messages.returncode == 0, messages.stderr
    shown = json.loads(messages.stdout)
    assert shown[-1]["role"] == "tool" and shown[-1]["tool_call_id"] == call.call_id
    # the fork is a session like any other: it takes a prompt, and the origin is untouched
    again = cli(home, "run", "--session", fork_id, READ)
    assert again.returncode == 0, again.stderr
    assert path.read_text().splitlines() == origin_lines


def test_a_fork_of_a_fork_and_bad_fork_points(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    first_end = next(e for e in load_log(path).events if isinstance(e, TurnEnd))
    fork_id, fork_path = session_line(cli(home, "fork", sid, "--at", str(first_end.seq)).stdout)
    fork_events = load_log(fork_path).events
    assert [e.type for e in fork_events[first_end.seq + 1 :]] == ["session/forked"]  # nothing was open
    twice = cli(home, "fork", str(fork_path), "--at", str(len(fork_events) - 1))
    assert twice.returncode == 0, twice.stderr
    grand_id, grand_path = session_line(twice.stdout)
    grand = load_log(grand_path).events
    assert [e.type for e in grand[-2:]] == ["session/forked", "session/forked"]
    last = grand[-1]
    assert isinstance(last, SessionForked) and last.from_ == fork_id
    for bad in ("-1", str(len(load_log(path).events)), "x"):
        refused = cli(home, "fork", sid, "--at", bad)
        assert refused.returncode == 2
        assert ("BAD_FORK_POINT" in refused.stderr) or ("invalid int value" in refused.stderr)
    missing = cli(home, "fork", "s_000000000000", "--at", "0")
    assert missing.returncode == 2 and "LOG_NOT_FOUND" in missing.stderr


def test_replay_answers_matching_requests_and_stops_where_they_diverge(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid, path = session_line(cli(home, "run", READ).stdout)
    assert cli(home, "run", "--session", sid, READ).returncode == 0  # turn 2 asks it again
    events = load_log(path).events
    first_end = next(e for e in events if isinstance(e, TurnEnd))
    fork_id, fork_path = session_line(cli(home, "fork", sid, "--at", str(first_end.seq)).stdout)
    # the same second prompt: every request matches one of the origin's, so its answers replay
    # (the read tool runs again for real and returns the same file)
    replayed = cli(home, "run", "--session", fork_id, "--model", f"replay:{sid}", READ)
    assert replayed.returncode == 0, replayed.stderr
    answers = [e for e in events if e.type == "assistant/message"]
    last_text = "".join(b.text for b in answers[-1].message.content if b.type == "text")  # type: ignore[attr-defined]
    assert replayed.stdout.strip().splitlines()[0] == last_text.strip().splitlines()[0]
    fork_events = load_log(fork_path).events
    frozen = [e for e in fork_events if e.type == "request/frozen"]
    assert frozen and all(e.provider == "replay" for e in frozen[-2:])  # type: ignore[attr-defined]
    # a prompt the origin never saw: the first request already diverges, with a reason
    fork2_id, _ = session_line(cli(home, "fork", sid, "--at", str(first_end.seq)).stdout)
    diverged = cli(home, "run", "--session", fork2_id, "--model", f"replay:{sid}", "say something else")
    assert diverged.returncode != 0
    text = diverged.stdout + diverged.stderr
    assert "REPLAY_DIVERGED" in text and "say something else" in text and "differ at message" in text


def test_compare_a_fork_with_its_origin(origin: tuple[Path, str, Path]) -> None:
    home, sid, path = origin
    events = load_log(path).events
    first_end = next(e for e in events if isinstance(e, TurnEnd))
    fork_id, fork_path = session_line(cli(home, "fork", sid, "--at", str(first_end.seq)).stdout)
    assert cli(home, "run", "--session", fork_id, "what is in src/math.ts?").returncode == 0
    done = cli(home, "compare", sid, fork_id)
    assert done.returncode == 0, done.stderr
    origin_user = [e for e in events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"][1]
    fork_user = [e for e in load_log(fork_path).events
                 if isinstance(e, UserMessageEvent) and e.message.source.kind == "user"][1]
    line = next(x for x in done.stdout.splitlines() if x.startswith("first divergence:"))
    assert f"A seq {origin_user.seq}, B seq {fork_user.seq}" in line
    assert "turn 2 step 1" in line
    assert any(x.startswith("-") and "run the tests" in x for x in done.stdout.splitlines())
    assert any(x.startswith("+") and "src/math.ts?" in x for x in done.stdout.splitlines())
    as_json = json.loads(cli(home, "compare", sid, fork_id, "--json").stdout)
    d = as_json["divergence"]
    assert (d["what"], d["turn"], d["step"]) == ("request", 2, 1)
    assert (d["a"]["seq"], d["b"]["seq"]) == (origin_user.seq, fork_user.seq)
    assert [s["same"] for s in as_json["steps"]][:-1] == [True] * (len(as_json["steps"]) - 1)
    same = json.loads(cli(home, "compare", sid, sid, "--json").stdout)
    assert same["divergence"] is None and all(s["same"] for s in same["steps"])
