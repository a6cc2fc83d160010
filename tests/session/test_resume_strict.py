"""Resume never deletes a complete line (issue 16, item 4): only a torn tail is dropped, and
both that and a refusal are said — on ``run --session`` in a real process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.errors import LogFormatError
from dsh_notebook.session import SessionStore
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*args, env=env, timeout=120)


def _session(tmp_path: Path) -> tuple[Path, str, Path]:
    home = tmp_path / "home"
    done = _cli("run", "--model", "script:auto", "--cwd", str(tmp_path), "hi", home=home)
    assert done.returncode == 0, done.stderr
    sid = done.stdout.strip().splitlines()[-1].split()[1]
    return home, sid, home / "sessions" / f"{sid}.jsonl"


def test_a_complete_unreadable_last_line_is_refused_with_its_line_number_and_kept(tmp_path: Path) -> None:
    home, sid, path = _session(tmp_path)
    lines = len(path.read_bytes().splitlines())
    with path.open("ab") as f:
        f.write(b'{"seq":999,"type":"no/such-event"}\n')
    before = path.read_bytes()
    done = _cli("run", "--session", sid, "--model", "script:auto", "again", home=home)
    assert done.returncode != 0
    assert "LOG_CORRUPT" in done.stderr and f"line {lines + 1}" in done.stderr
    assert "Traceback" not in done.stderr
    assert path.read_bytes() == before  # nothing deleted, nothing appended
    with pytest.raises(LogFormatError) as err:
        SessionStore(home).resume(sid)
    assert err.value.code == "LOG_CORRUPT" and err.value.details["line"] == lines + 1
    shown = _cli("show", "--messages", sid, home=home)  # the lenient reader still shows it
    assert shown.returncode == 0, shown.stderr


def test_a_torn_tail_is_dropped_and_the_user_is_told(tmp_path: Path) -> None:
    home, sid, path = _session(tmp_path)
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq":40,"time":17')
    done = _cli("run", "--session", sid, "--model", "script:auto", "again", home=home)
    assert done.returncode == 0, done.stderr
    assert f"note: resuming {sid}: dropped a torn last line" in done.stderr
    assert path.read_bytes().startswith(good) and b'"time":17\n' not in path.read_bytes()
