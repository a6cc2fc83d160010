"""The unit tier enforced as it runs (tests/support/tiers.py defines the tiers): :data:`GUARD`
records, for the ``unit`` test running now, each process it starts — ``subprocess``, ``os.fork``,
``posix_spawn``, ``os.system``, a run of the CLI's warm interpreter (tests/support/cli.py) — and each
connection it makes beyond loopback, from any thread of this process (the package's own threads
count). tests/conftest.py installs it at start, points it at each unit test from its set-up to its
teardown, and fails the test at its teardown with what it found."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import pytest

# processes started once per process by whichever test comes first, not by what a test does: the
# package's process watchdog (tools/watchdog.py: the first tool call's, ended with this process) and
# ``uname -p`` (``platform.processor()``, which the ``openai`` SDK's platform headers ask for once)
ONCE_PER_PROCESS = (("watchdog.py",), ("uname", "-p"))


class UnitGuard:
    """Records, for the ``unit`` test running now, each process it starts and each connection it
    makes beyond loopback (from any thread of this process: a product's own threads count)."""

    def __init__(self) -> None:
        self.current: pytest.Item | None = None
        self.found: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def note(self, what: str) -> None:
        item = self.current
        if item is not None:
            with self._lock:
                self.found.setdefault(item.nodeid, []).append(f"{what} (thread {threading.current_thread().name})")

    def install(self) -> None:
        guard = self

        def wrap(owner: Any, name: str, describe: Callable[..., str]) -> None:
            real = getattr(owner, name)

            def watched(*args: Any, **kwargs: Any) -> Any:
                if guard.current is not None:
                    what = describe(*args, **kwargs)
                    if what:
                        guard.note(what)
                return real(*args, **kwargs)

            # named as the attribute it replaces, so pickle still finds it by reference
            # (a test pickles os.system inside a payload's __reduce__)
            if isinstance(owner, type):
                watched.__module__, watched.__qualname__ = owner.__module__, f"{owner.__qualname__}.{name}"
            else:
                watched.__module__, watched.__qualname__ = owner.__name__, name
            watched.__name__ = name
            setattr(owner, name, watched)

        wrap(subprocess.Popen, "_execute_child", lambda _self, args, *a, **k: _started(args))
        for name in ("fork", "forkpty"):
            wrap(os, name, lambda *a, _n=name, **k: f"called os.{_n}()")
        for name in ("posix_spawn", "posix_spawnp"):
            wrap(os, name, lambda path, argv, *a, **k: f"started a process: {_argv(argv)}")
        wrap(os, "system", lambda command, *a, **k: f"started a process: {command}")
        for name in ("connect", "connect_ex"):
            wrap(socket.socket, name, lambda sock, address, *a, **k: guard._connecting(sock, address))
        from tests.support import cli  # the CLI's warm runs are forks of another process

        wrap(cli, "_warm", lambda _zygote, argv, *a, **k: f"ran the CLI: python -m dsh_notebook {_argv(argv)}")

    def _connecting(self, sock: socket.socket, address: Any) -> str:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple) and address:
            host = str(address[0])
            try:
                local = ipaddress.ip_address(host.split("%")[0]).is_loopback
            except ValueError:
                local = host == "localhost" or host.endswith(".localhost")
            if not local:
                return f"connected beyond loopback: {host}:{address[1] if len(address) > 1 else '?'}"
        return ""

    def failure(self, nodeid: str) -> str | None:
        with self._lock:
            found = self.found.pop(nodeid, [])
        if not found:
            return None
        shown = "\n  ".join(found[:10]) + (f"\n  … and {len(found) - 10} more" if len(found) > 10 else "")
        return (f"a unit test is in-process only (tests/support/tiers.py), and this one\n  {shown}\n"
                "Mark it @pytest.mark.integration (or e2e / scale), or keep it in-process.")


GUARD = UnitGuard()  # this process's (installed by tests/conftest.py at start)


def _started(args: Any) -> str:
    words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    names = [os.path.basename(os.fsdecode(w)) if isinstance(w, (str, bytes, os.PathLike)) else str(w) for w in words]
    if any(all(part in names for part in once) for once in ONCE_PER_PROCESS):
        return ""
    return f"started a process: {_argv(args)}"


def _argv(args: Any) -> str:
    if isinstance(args, (str, bytes, os.PathLike)):
        return os.fsdecode(args)[:200]
    return " ".join(os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in args)[:200]


__all__ = ["GUARD", "ONCE_PER_PROCESS", "UnitGuard"]
