"""``DSH_HOME`` and ``sessions/`` (issue 16, low items), through the real CLI: a new home is 0700,
a home that is a file, read-only or too long is a coded error (never ``INTERNAL``), and a FIFO
among the logs is skipped without blocking."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, home: Path | str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*args, env=env, timeout=timeout)


def test_a_new_home_is_private(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    done = _cli("run", "--cwd", str(tmp_path), "hi", home=home)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "sessions").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o700  # created on the way: private too
    (log,) = (home / "sessions").glob("*.jsonl")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["file", "file-parent", "too-long"])
def test_a_bad_home_is_a_coded_error(tmp_path: Path, kind: str) -> None:
    if kind == "too-long":
        home: Path = tmp_path / ("x" * 300)
        code = "PATH_TOO_LONG"
    else:
        (tmp_path / "f").write_text("not a directory")
        home = tmp_path / "f" if kind == "file" else tmp_path / "f" / "home"
        code = "BAD_HOME"
    done = _cli("run", "--cwd", str(tmp_path), "hi", home=home)
    assert done.returncode == 2, done.stderr
    assert code in done.stderr and "Traceback" not in done.stderr and "INTERNAL" not in done.stderr


def test_a_read_only_home_is_a_coded_error(tmp_path: Path) -> None:
    home = tmp_path / "ro"
    home.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only mount needs root (root also ignores chmod, so this is the real test)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=16k", "tmpfs", str(home)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount here: {mounted.stderr.strip()}")
    try:
        done = _cli("run", "--cwd", str(tmp_path), "hi", home=home)
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)
    assert done.returncode == 2, done.stderr
    assert "BAD_HOME" in done.stderr and "Read-only file system" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_fifo_in_sessions_is_skipped_without_blocking(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _cli("run", "--cwd", str(tmp_path), "hello there", home=home)
    assert done.returncode == 0, done.stderr
    sid = done.stdout.strip().splitlines()[-1].split()[1]
    os.mkfifo(home / "sessions" / "s_fifo00000000.jsonl")
    listed = _cli("sessions", home=home, timeout=30)
    assert listed.returncode == 0, listed.stderr
    assert sid in listed.stdout and "s_fifo" not in listed.stdout
    shown = _cli("show", "s_fifo00000000", home=home, timeout=30)
    assert shown.returncode == 2 and "LOG_NOT_FOUND" in shown.stderr
    by_path = _cli("show", str(home / "sessions" / "s_fifo00000000.jsonl"), home=home, timeout=30)
    assert by_path.returncode == 2 and "LOG_NOT_FOUND" in by_path.stderr
    resumed = _cli("run", "--session", "s_fifo00000000", "hi", home=home, timeout=30)
    assert resumed.returncode != 0 and "Traceback" not in resumed.stderr


def test_load_log_refuses_a_fifo_without_opening_it_blocking(tmp_path: Path) -> None:
    from dsh_notebook.errors import LogFormatError
    from dsh_notebook.session import load_log

    fifo = tmp_path / "s_x.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LogFormatError) as err:
        load_log(fifo)
    assert err.value.code == "LOG_NOT_FOUND" and "not a regular file" in err.value.message
