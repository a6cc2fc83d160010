"""A tiny init for an unsandboxed command: ``python reaper.py CMD ARGS...``.

Where bubblewrap is unavailable the ``bash`` tool starts its command under this script. It
makes itself a **child subreaper** (``PR_SET_CHILD_SUBREAPER``), so every process the command
leaves behind — ``setsid``, ``nohup``, double forks, even one that cleared its environment — is
re-parented to it instead of to init. When the command exits, or on ``SIGTERM``/``SIGINT``/
``SIGHUP`` (the tool's timeout or cancellation; ``PR_SET_PDEATHSIG`` sends ``SIGTERM`` when
the host dies), it kills all its remaining descendants, reaps them, and exits with the
command's status. Linux only; it runs as a plain script (standard library only).

:class:`CallSubreaper` is the in-process twin for the notebook's ``python`` tool (issue 35, design
item 8): its code runs in the kernel's own process, so the kernel itself is a child subreaper
while the call runs. A process the code starts that detaches — ``setsid``, a double fork, one that
clears its environment (``setsid env -i …``) and so loses the call's marker — is re-parented to
the kernel instead of init, stays in the kernel's process tree, and is ended with the call
(:class:`~.watchdog.CallProcesses`); the adopted processes' zombies are reaped when the call ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37


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


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    _libc().prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return bool(flag.value)


def _task_children(tid: int) -> list[int]:
    """Children of thread ``tid`` of this process (the kernel gives adopted orphans to the main
    thread); every child of the process where the kernel lacks ``/proc/*/task/*/children``."""
    try:
        with open(f"/proc/{os.getpid()}/task/{tid}/children", "rb") as fh:
            return [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        return _children(os.getpid())


class CallSubreaper:
    """``with CallSubreaper():`` (on the thread that runs the call's code — the kernel's main
    thread, where the kernel also puts adopted orphans) this process adopts the orphans of its
    descendants until the block ends; then it reaps the zombies among that thread's children that
    were not its children before (the adopted ones, and forks the code never waited for: it ends
    them anyway) and stops adopting, unless it already was a subreaper. Children of other threads
    (the host's asyncio subprocesses) are never touched. A no-op off Linux."""

    def __init__(self) -> None:
        self.active = False
        self._before: set[int] = set()
        self._was = False
        self._tid = 0

    def __enter__(self) -> CallSubreaper:
        if not sys.platform.startswith("linux"):
            return self
        self._tid = threading.get_native_id()
        self._before = set(_task_children(self._tid))
        self._was = is_subreaper()
        if not self._was:
            self.active = _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        return self

    def __exit__(self, *exc: object) -> None:
        if not sys.platform.startswith("linux"):
            return
        for pid in _task_children(self._tid):
            if pid not in self._before and _zombie(pid):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
        if self.active:
            _libc().prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
            self.active = False


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
    libc = _libc()
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
