"""The process watchdog: nothing a tool call started outlives the host process, however it ends.

Every command a tool starts carries a marker variable (``DSH_TOOL_CALL=<token>``) that all its
descendants inherit — ``setsid``, ``nohup`` and double forks included. :func:`kill_marked`
finds them by scanning ``/proc/*/environ`` and kills them; the tool calls it when a call ends.

For the host's own exit (EOF, SIGINT, SIGTERM, even SIGKILL) a :class:`Watchdog` child process
is started once per host process. It reads ``+token`` / ``-token`` lines on a pipe from the host;
when the pipe reaches EOF — the host is gone, whatever killed it — it kills every process that
still carries a registered token, then exits. This file runs as a plain script (no package
import) so the watchdog starts in milliseconds; it uses only the standard library.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import threading

MARKER_VAR = "DSH_TOOL_CALL"


def marked_pids(marker: str) -> list[int]:
    """PIDs of live processes whose environment carries ``MARKER_VAR=marker``."""
    needle = f"{MARKER_VAR}={marker}".encode()
    me = os.getpid()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if data.startswith(needle + b"\0") or b"\0" + needle + b"\0" in data or data.endswith(b"\0" + needle):
            found.append(int(entry))
    return found


def kill_marked(marker: str, rounds: int = 20) -> int:
    """SIGKILL every process carrying ``marker`` until none is left (a fork may race a scan).
    Returns how many kills were sent."""
    killed = 0
    for _ in range(rounds):
        pids = marked_pids(marker)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` in the process tree (``/proc/*/stat`` parent links)."""
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return set()
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _marker_of(pid: int) -> str | None:
    """The :data:`MARKER_VAR` value in ``pid``'s environment, if any."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            for item in fh.read().split(b"\0"):
                if item.startswith(MARKER_VAR.encode() + b"="):
                    return item.split(b"=", 1)[1].decode(errors="replace")
    except OSError:
        pass
    return None


class CallProcesses:
    """Processes an in-process call (the notebook's ``python`` tool) starts end with the call.

    While the ``with`` block runs, ``os.environ`` carries a fresh :data:`MARKER_VAR` (inherited by
    every ``subprocess``, ``setsid`` and ``nohup`` child) and the watchdog knows it (the kernel's
    death ends them too). On exit, every process carrying the marker and every new descendant of
    this process (``fork`` without ``exec`` included) is killed; :attr:`stopped` counts them."""

    def __init__(self) -> None:
        self.marker = secrets.token_hex(8)
        self.stopped = 0
        self._before: set[int] = set()
        self._previous: str | None = None

    def __enter__(self) -> CallProcesses:
        with contextlib.suppress(Exception):
            WATCHDOG.register(self.marker)  # may start the watchdog child: before the snapshot
        self._before = descendants(os.getpid())
        self._previous = os.environ.get(MARKER_VAR)
        os.environ[MARKER_VAR] = self.marker
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is None:
            os.environ.pop(MARKER_VAR, None)
        else:
            os.environ[MARKER_VAR] = self._previous
        pids: set[int] = set()
        for _ in range(20):  # a fork may race a scan
            new = {p for p in descendants(os.getpid()) - self._before if _marker_of(p) in (None, self.marker)}
            new |= set(marked_pids(self.marker))  # another tool call's processes (own marker) are not ours
            if not new:
                break
            for pid in new:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            pids |= new
            for pid in new:  # our own children: reap them (no zombie left in the kernel)
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)
        self.stopped = len(pids)
        with contextlib.suppress(Exception):
            WATCHDOG.unregister(self.marker)


class Watchdog:
    """The host side: a lazily started watchdog child and the tokens registered with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _send(self, line: str) -> None:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                try:
                    self._proc = subprocess.Popen(
                        [sys.executable, "-S", os.path.abspath(__file__)],
                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                        start_new_session=True,  # a SIGINT to the host's terminal group spares it
                        close_fds=True,
                    )
                except OSError:
                    self._proc = None
                    return
            assert self._proc.stdin is not None
            with contextlib.suppress(OSError, ValueError):
                self._proc.stdin.write(line.encode() + b"\n")
                self._proc.stdin.flush()

    def register(self, marker: str) -> None:
        self._send(f"+{marker}")

    def unregister(self, marker: str) -> None:
        self._send(f"-{marker}")


WATCHDOG = Watchdog()


def _serve() -> None:
    """The watchdog child: track tokens until stdin closes, then kill what is left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    live: set[str] = set()
    for raw in sys.stdin.buffer:
        line = raw.decode(errors="replace").strip()
        if line.startswith("+"):
            live.add(line[1:])
        elif line.startswith("-"):
            live.discard(line[1:])
    for marker in live:
        kill_marked(marker)


if __name__ == "__main__":
    _serve()
