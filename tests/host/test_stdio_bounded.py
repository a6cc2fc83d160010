"""``serve --stdio`` reads lines in bounded memory (issue 16, item 7): a real subprocess fed a
100 MB line, its RSS sampled with psutil; the oversized line is answered ``LINE_TOO_LONG`` under
its ``rpcId`` and the host keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import psutil

from dsh_notebook.host.envelopes import MAX_LINE
from dsh_notebook.host.lines import Oversized, oversized_error, read_lines

REPO = Path(__file__).resolve().parents[2]
MB = 1 << 20


def _serve(home: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "dsh_notebook", "serve", "--stdio"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)


def _reply(out: IO[bytes]) -> dict[str, Any]:
    line = out.readline()
    assert line, "the server closed its output"
    reply: dict[str, Any] = json.loads(line)
    return reply


def _list(rpc_id: str) -> bytes:
    return json.dumps({"type": "client-request", "rpcId": rpc_id, "method": "session/list",
                       "payload": {"args": {}}}).encode() + b"\n"


class Peak:
    """Samples a process's RSS on a thread until stopped; ``growth`` over the first sample."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.base = self.peak = self.proc.memory_info().rss
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    @property
    def growth(self) -> int:
        self.stop.set()
        self.thread.join()
        return self.peak - self.base


def test_a_100mb_line_keeps_rss_bounded_and_is_answered_under_its_rpc_id(tmp_path: Path) -> None:
    proc = _serve(tmp_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_list("warm"))  # the host is up and its imports are done before sampling
        proc.stdin.flush()
        assert _reply(proc.stdout)["rpcId"] == "warm"
        peak = Peak(proc.pid)
        head = b'{"type":"client-request","rpcId":"big-1","method":"session/prompt","payload":{"args":{"x":"'
        proc.stdin.write(head)
        block = b"a" * MB
        for _ in range(100):
            proc.stdin.write(block)
        proc.stdin.write(b'"}}}\n')
        proc.stdin.write(_list("after"))
        proc.stdin.flush()
        big, after = _reply(proc.stdout), _reply(proc.stdout)
        growth = peak.growth
        assert big["rpcId"] == "big-1" and big["result"]["ok"] is False
        assert big["result"]["error"]["code"] == "LINE_TOO_LONG"
        assert after["rpcId"] == "after" and after["result"]["ok"] is True  # still serving
        assert growth < 40 * MB, f"RSS grew {growth / MB:.0f} MB on a 100 MB line"
        peak = Peak(proc.pid)  # no newline at all, then end of input: bounded too
        for _ in range(100):
            proc.stdin.write(block)
        proc.stdin.flush()
        proc.stdin.close()
        last = _reply(proc.stdout)
        assert last["rpcId"] is None and last["result"]["error"]["code"] == "LINE_TOO_LONG"
        assert peak.growth < 40 * MB
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_read_lines_splits_keeps_and_skips(tmp_path: Path) -> None:
    path = tmp_path / "in"
    long = b'{"streamId":"s\\"1","x":"' + b"y" * 300 + b'"}'
    path.write_bytes(b"one\r\n\ntwo\n" + long + b"\nthree")
    fd = os.open(path, os.O_RDONLY)
    try:
        got = list(read_lines(fd, limit=100, chunk=7))
    finally:
        os.close(fd)
    assert got[:3] == [b"one", b"", b"two"] and got[4] == b"three"
    over = got[3]
    assert isinstance(over, Oversized) and over.size == len(long)
    err = oversized_error(over, limit=100)
    assert err.code == "LINE_TOO_LONG" and err.stream_id == 's"1' and err.rpc_id is None
    assert MAX_LINE == 8 * MB
