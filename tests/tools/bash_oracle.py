"""What ``/bin/bash`` itself runs for a command line — the oracle the parser is checked against.

"A grammar is not bash": tree-sitter's reading of a line is only trusted where bash agrees. The
oracle runs ``/bin/bash -c LINE`` in an empty directory with a ``PATH`` that holds nothing, every builtin but
``enable`` disabled and globbing off (``BASH_ENV`` prelude), so every simple command bash runs —
builtins included — reaches ``command_not_found_handle``, which records its words (NUL-separated,
one file per command) and exits with the status asked for. ``bash``/``sh`` run their ``-c``
string through the same prelude, so nested commands are recorded too. Each line runs twice, every
command succeeding and every command failing, so both sides of ``&&`` / ``||`` run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

PRELUDE = r"""
command_not_found_handle() {
  ORACLE_F="$(/usr/bin/mktemp -p "$ORACLE_LOG" .XXXXXX)"
  /usr/bin/printf '%s\0' "$@" > "$ORACLE_F"
  /bin/mv "$ORACLE_F" "$ORACLE_LOG/r${ORACLE_F##*/.}"
  case "$1" in bash|sh) /bin/bash "${@:2}" ;; esac
  /bin/sh -c "exit $ORACLE_RC"
}
set -f
enable -n BUILTINS
"""
HOME = "/home/oracle"


def _builtins() -> list[str]:
    out = subprocess.run(["/bin/bash", "-c", "compgen -b"], capture_output=True, text=True, check=True)
    return [b for b in out.stdout.split() if b != "enable"]


def prelude(tmp: Path) -> Path:
    path = tmp / "prelude.sh"
    if not path.exists():
        path.write_text(PRELUDE.replace("BUILTINS", " ".join(_builtins())))
    return path


def run(line: str, tmp: Path, inputs: list[str], rc: int) -> Counter[tuple[str, ...]]:
    """The commands bash runs for ``line`` (each as its words), every command exiting ``rc``."""
    base = tmp / f"run{rc}"
    log, cwd = base / "log", base / "cwd"
    log.mkdir(parents=True)
    cwd.mkdir()
    for name in inputs:  # read redirections need their file, or bash skips the command
        target = cwd / name
        if not target.exists() and name.startswith(("./", "")) and not name.startswith("/"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("input\n")
    env = {"PATH": "/nonexistent-oracle-path", "HOME": HOME, "BASH_ENV": str(prelude(tmp)), "ORACLE_LOG": str(log),
           "ORACLE_RC": str(rc), "LC_ALL": "C.UTF-8"}
    proc = subprocess.Popen(["/bin/bash", "-c", line], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=30)
        _wait_group(proc.pid)  # commands the line left in the background (`a &`) finish too
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    seen: Counter[tuple[str, ...]] = Counter()
    for record in (r for r in os.listdir(log) if r.startswith("r")):  # complete records only
        data = (log / record).read_bytes().decode("utf-8", "surrogateescape")
        seen[tuple(data.split("\0")[:-1])] += 1
    return seen


def _wait_group(pgid: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)  # polls the OS for the group's end (no event to wait on)
    raise TimeoutError(f"the commands of process group {pgid} did not end")


def bash_runs(line: str, tmp: Path, inputs: list[str]) -> Counter[tuple[str, ...]]:
    """Every command bash runs for ``line`` when its commands succeed, or when they fail."""
    return run(line, tmp, inputs, 0) | run(line, tmp, inputs, 1)


__all__ = ["HOME", "bash_runs"]
