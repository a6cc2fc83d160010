"""``run`` at the terminal (issue 16, low items), in real subprocesses: ``--approve ask`` on a TTY
(and its denial without one, the default outside the demo workspace), control sequences in model
text and tool output neutralised, and SIGTERM handled like Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

from dsh_notebook.cli_tty import printable
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.session import load_log
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply

REPO = Path(__file__).resolve().parents[2]
FIX = "run the tests; if they fail fix src/math.ts; tell me the result"


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": FakeOpenAIServer.api_key or ""}


def _run(*args: str, home: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_notebook", "run", *args], capture_output=True, text=True,
                          env=_env(home), timeout=120, check=False, **kw)  # type: ignore[call-overload]


def test_without_a_terminal_ask_is_the_default_outside_the_demo_copy_and_denies(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    before = (ws / "src" / "math.ts").read_text()
    for flags in ((), ("--approve", "ask")):
        done = _run(*flags, "--cwd", str(ws), FIX, home=tmp_path / "home", stdin=subprocess.DEVNULL,
                    start_new_session=True)
        assert "approval for bash: no terminal to ask on, so it was denied" in done.stderr
        assert "--mode dont-ask denies without asking" in done.stderr
    assert (ws / "src" / "math.ts").read_text() == before


def test_ask_on_a_terminal_prompts_and_allows(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    before = (ws / "src" / "math.ts").read_text()
    master, slave = pty.openpty()
    try:
        os.write(master, b"y\n" * 6)  # the answers wait in the terminal's line buffer
        done = _run("--approve", "ask", "--cwd", str(ws), FIX, home=tmp_path / "home", stdin=slave,
                    start_new_session=True)  # no controlling terminal: it asks on the stdin TTY
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert "dsh: allow bash node test/run.mjs? [y/N]" in done.stderr
    assert (ws / "src" / "math.ts").read_text() != before  # the edit was allowed and made


def test_control_sequences_in_model_text_and_tool_output_are_neutralised(tmp_path: Path) -> None:
    (tmp_path / "evil.txt").write_text("clip \x1b]52;c;SGVsbG8=\x07 clear \x1b[2J csi \x9b31m end\n")
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": "cat evil.txt"}))]),
                       text_reply("title \x1b]0;pwned\x07 bell \x07 cr \r tab\tok"))
        done = _run("--model", "fake-model", "--base-url", server.base_url, "--approve", "auto", "--cwd",
                    str(tmp_path), "show evil.txt", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    for raw in ("\x1b", "\x07", "\x9b", "\r"):
        assert raw not in out
    assert "title ␛]0;pwned␇ bell ␇ cr ␍ tab\tok" in done.stdout
    assert "clip ␛]52;c;SGVsbG8=␇" in done.stderr  # the tool result's outcome line (its last line)
    assert printable("a\nb\tc\x00\x7f\x85") == "a\nb\tc␀␡\\u0085"


def test_sigterm_ends_the_turn_aborted_with_every_call_answered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": "sleep 30"}))]))
        proc = subprocess.Popen([sys.executable, "-m", "dsh_notebook", "run", "--model", "fake-model",
                                 "--base-url", server.base_url, "--approve", "auto", "--cwd", str(tmp_path),
                                 "sleep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=_env(home))
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        seen = ""
        while "→ bash" not in seen:  # the call is running
            assert time.monotonic() < deadline and proc.poll() is None, seen
            seen += proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, seen + err
    assert "terminated: the turn was cancelled" in err
    log_path = Path(out.strip().splitlines()[-1].split(" log: ")[1])
    events = load_log(log_path).events
    calls = [e for e in events if e.type == "tool/call"]
    results = [e for e in events if e.type == "tool/result"]
    assert [c.call_id for c in calls] == [r.message.tool_call_id for r in results] == ["c1"]  # type: ignore[attr-defined]
    ends = [e for e in events if e.type == "turn/end"]
    assert ends[-1].reason.kind == "aborted"  # type: ignore[attr-defined]
