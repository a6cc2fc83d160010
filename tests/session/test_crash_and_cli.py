"""Real processes: SIGKILL in the middle of appends, and ``python -m dsh_notebook show``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest

from dsh_notebook.session import SessionStore, load_log
from tests.session.helpers import PYTHON, RawLog, die, subprocess_env, tool_turn
from tests.support.cli import dsh
from tests.support.openai_validator import validate_chat_request

WRITER = textwrap.dedent(
    """
    import sys
    from dsh_notebook.session import Session, SessionLog
    from dsh_notebook.wire.messages import user_text
    from dsh_notebook.wire.events import UserMessageEvent
    s = Session("s_kill", cwd="/ws")
    log = SessionLog(s, sys.argv[1])
    n = 0
    while True:
        s.append(UserMessageEvent(message=user_text("message %d " % n + "x" * (n % 300))))
        n += 1
        if n % 37 == 0:
            log.flush()
            print(s.last_seq, flush=True)
    """
)


def test_sigkill_mid_appends_loses_nothing_before_the_last_flush(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s_kill.jsonl"
    proc = subprocess.Popen(
        [PYTHON, "-c", WRITER, str(path)], stdout=subprocess.PIPE, env=subprocess_env(), text=True
    )
    assert proc.stdout is not None
    flushed = -1
    try:
        for _ in range(40):
            line = proc.stdout.readline()
            assert line, "writer died early"
            flushed = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    loaded = load_log(path)
    assert len(loaded.events) > flushed >= 36 * 40
    for k, ev in enumerate(loaded.events):
        assert ev.seq == k and ev.message.content[0].text.startswith(f"message {k} ")  # type: ignore[union-attr]


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return dsh(*args, env=subprocess_env(DSH_HOME=str(home)), timeout=60)


def broken_logs() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    raw = RawLog()
    raw.add("turn/start", turn=1)
    raw.user("read it")
    raw.add("step/start", turn=1, step=1)
    raw.assistant("c1", "c2")
    raw.result("c1", cite=raw.call("c1"))
    raw.call("c2")
    out["open turn, missing result, torn tail"] = raw.text(b'{"seq":7,"time":17')
    raw = RawLog()
    raw.result("early")  # orphan at the start
    raw.user("go")
    raw.assistant("call_0")
    raw.result("call_0")
    raw.result("call_0")  # duplicate result
    raw.result("nobody")  # orphan
    raw.assistant("call_0")  # duplicate id
    raw.result("call_0")
    out["orphans and duplicate ids"] = raw.text()
    lines = out["orphans and duplicate ids"].decode().splitlines()
    lines[3] = "{not json"
    out["corrupt middle line"] = ("\n".join(lines) + "\n").encode()
    return out


@pytest.mark.parametrize("name", list(broken_logs()))
def test_show_messages_on_broken_logs_is_a_valid_request(tmp_path: Path, name: str) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_bytes(broken_logs()[name])
    before = path.read_bytes()
    proc = run_cli("show", str(path), "--messages", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = json.loads(proc.stdout)
    validate_chat_request(messages)
    assert messages[0]["role"] == "user" and path.read_bytes() == before
    assert "repair:" in proc.stderr or "warning:" in proc.stderr


def test_show_by_id_readable_and_json(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    s = store.create("/ws")
    tool_turn(s, 1, ["c1"], prompt="hello there", end=False)
    store.flush(s.id)
    proc = run_cli("show", s.id, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith(f"session {s.id}")
    assert len([x for x in out if "tool/result" in x]) == 1 and '"hello there"' in proc.stdout
    assert "crash repair on resume would append" in proc.stdout and "turn/end" in out[-1]
    as_json = run_cli("show", s.id, "--json", home=tmp_path)
    assert as_json.stdout.splitlines() == [s.line(k) for k in range(len(s))]
    listing = run_cli("sessions", home=tmp_path)
    assert s.id in listing.stdout and "busy" in listing.stdout  # this process still writes it
    die(store, s.id)  # ... until it dies mid-turn
    listing = run_cli("sessions", home=tmp_path)
    assert s.id in listing.stdout and "interrupted" in listing.stdout and "hello there" in listing.stdout


def test_show_errors_are_coded_with_exit_2(tmp_path: Path) -> None:
    missing = run_cli("show", "s_nosuchsession", home=tmp_path)
    assert missing.returncode == 2 and "LOG_NOT_FOUND" in missing.stderr
    raw = RawLog()
    raw.header["version"] = 2
    path = raw.write(tmp_path / "v2.jsonl")
    bad = run_cli("show", str(path), "--messages", home=tmp_path)
    assert bad.returncode == 2 and "LOG_VERSION" in bad.stderr and bad.stdout == ""
    empty = run_cli("sessions", home=tmp_path / "nothing")
    assert empty.returncode == 0 and "no saved sessions" in empty.stdout


def test_show_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    """`show --messages LOG | head -1`: the reader leaves early; no traceback on stderr."""
    store = SessionStore(tmp_path)
    s = store.create("/ws")
    for turn in range(1, 40):
        tool_turn(s, turn, [f"c{turn}"], prompt="x" * 2000)
    store.flush(s.id)
    for args in (("show", s.id, "--messages"), ("show", s.id)):
        proc = subprocess.Popen([PYTHON, "-m", "dsh_notebook", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=subprocess_env(DSH_HOME=str(tmp_path)))
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # like `head` exiting before the writer writes
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141, err
        assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.integration
def test_run_prints_its_answer_once_when_stdout_and_stderr_are_one_pipe(tmp_path: Path) -> None:
    """``run … 2>&1`` (one pipe for both): the streamed answer is not printed a second time; with
    stderr elsewhere, stdout still carries the answer."""
    prompt = "read README.md and summarise"
    env = subprocess_env(DSH_HOME=str(tmp_path / "home"))
    merged = subprocess.run([PYTHON, "-m", "dsh_notebook", "run", prompt], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert merged.returncode == 0, merged.stdout
    assert merged.stdout.count("Here is a summary of README.md") == 1, merged.stdout
    split = subprocess.run([PYTHON, "-m", "dsh_notebook", "run", prompt], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert split.returncode == 0, split.stderr
    assert split.stdout.count("Here is a summary of README.md") == 1, split.stdout
    assert split.stderr.count("Here is a summary of README.md") == 1, split.stderr
