"""A full disk loses no committed event (issue 16, item 4), on a real, tiny tmpfs.

The file system is real: a 64 KiB tmpfs mounted for the test (root is needed; elsewhere the test
is skipped), filled with a filler file until ``write`` fails with ``ENOSPC``. Nothing in the
product is wrapped or patched.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.errors import LogWriteError
from dsh_notebook.session import SessionLog, load_log
from dsh_notebook.wire.events import TurnStart
from tests.host.support import make_host
from tests.session.helpers import new_session, tool_turn


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "fs"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(fs: Path) -> Path:
    """Fill ``fs`` to the last byte; returns the filler (delete it to free the space)."""
    filler = fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    block = b"x" * 4096
    try:
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        while True:  # the last partial page
            try:
                if os.write(fd, b"x") == 0:
                    break
            except OSError:
                break
    finally:
        os.close(fd)
    return filler


def test_a_failed_flush_keeps_every_event_and_leaves_no_torn_line(tiny_fs: Path) -> None:
    s = new_session("s_full")
    path = tiny_fs / "sessions" / "s_full.jsonl"
    log = SessionLog(s, path)
    tool_turn(s, 1, ["c1"])
    log.flush()
    durable = path.read_bytes()
    filler = fill(tiny_fs)
    for turn in range(2, 40):  # far more than the space left
        tool_turn(s, turn, [f"c{turn}"], prompt="y" * 300)
    with pytest.raises(LogWriteError) as err:
        log.flush()
    assert err.value.code == "DISK_FULL" and "free some space" in err.value.message
    assert path.read_bytes() == durable  # cut back: no torn line, nothing after it
    assert log.pending == len(s) - (log.flushed_seq + 1)
    s.append(TurnStart(turn=99))  # commits go on while the disk is full
    with pytest.raises(LogWriteError):
        log.flush()
    assert path.read_bytes() == durable
    filler.unlink()
    log.flush()  # space is back: what was pending is written, in order
    log.close()
    loaded = load_log(path)
    assert [e.seq for e in loaded.events] == list(range(len(s)))
    assert loaded.lines == [s.line(k) for k in range(len(s))] and not loaded.warnings


def test_a_turn_on_a_full_disk_ends_with_a_coded_error_and_the_next_turn_writes_it(tiny_fs: Path) -> None:
    host = make_host(tiny_fs / "home")
    client = DshClient(host)
    try:
        sid = client.create_session(cwd=str(tiny_fs), model="script:auto").session_id
        filler = fill(tiny_fs)
        failed = client.run("hello", sid)
        assert not failed.completed
        assert failed.reason["kind"] == "error" and failed.reason["error"]["code"] == "DISK_FULL"
        # valid, nothing torn — once the turn end's last (failing) flush has cut its partial line
        # back: the turn reports its end before that flush returns, so wait for the writer
        for _ in range(100):
            on_disk = load_log(tiny_fs / "home" / "sessions" / f"{sid}.jsonl")
            if not on_disk.warnings:
                break
            time.sleep(0.05)
        assert not on_disk.warnings
        filler.unlink()
        again = client.run("hello again", sid)
        assert again.completed, again.reason
    finally:
        client.close()
        host.shutdown()
    loaded = load_log(tiny_fs / "home" / "sessions" / f"{sid}.jsonl")
    events = [json.loads(line) for line in loaded.lines]
    assert [e["seq"] for e in events] == list(range(len(events)))
    ends = [e["reason"] for e in events if e["type"] == "turn/end"]
    assert [r["kind"] for r in ends] == ["error", "completed"]  # the failed turn's facts were kept
    assert ends[0]["error"]["code"] == "DISK_FULL"
