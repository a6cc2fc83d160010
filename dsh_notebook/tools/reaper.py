"""A tiny init for an unsandboxed command: ``python reaper.py CMD ARGS...``.

Where bubblewrap is unavailable the ``bash`` tool starts its command under this script. It
makes itself a **child subreaper** (``PR_SET_CHILD_SUBREAPER``), so every process the command
leaves behind — ``setsid``, ``nohup``, double forks, even one that cleared its environment — is
re-parented to it instead of to init. When the command exits, or on ``SIGTERM``/``SIGINT``/
``SIGHUP`` (the tool's timeout or cancellation; ``PR_SET_PDEATHSIG`` sends ``SIGTERM`` when
the host dies), it kills all its remaining descendants, reaps them, and exits with the
command's status. Linux only; it runs as a plain script (standard library only).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _children(me: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            out.append(int(entry))
    return out


def _descendants(me: int) -> list[int]:
    found, frontier = [], [me]
    while frontier:
        kids = [k for p in frontier for k in _children(p)]
        found += kids
        frontier = kids
    return found


def _end_all() -> None:
    """Kill every descendant until none is left (each kill re-parents grandchildren to us)."""
    me = os.getpid()
    for _ in range(50):
        pids = _descendants(me)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, 0)[0]:
            pass


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    parent = int(os.environ.pop("DSH_REAPER_PARENT", "0") or 0)
    if parent and os.getppid() != parent:  # the host died before the death signal was armed
        return 137

    def stop(signum: int, frame: object) -> None:
        _end_all()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    pid = os.fork()
    if pid == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    status = 0
    while True:
        try:
            done, raw = os.waitpid(-1, 0)  # reap adopted orphans until the command itself exits
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if done == pid:
            status = os.waitstatus_to_exitcode(raw)
            break
    _end_all()
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
