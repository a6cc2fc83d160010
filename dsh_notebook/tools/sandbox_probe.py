"""A probe sandbox for ``doctor``: every protection of the bash sandbox measured, not assumed.

:func:`probe` starts the same bwrap command line a ``bash`` call gets (same mounts, same
identity, same environment) with a small ``/bin/sh`` script that *tries* what a hostile command
would: read its capabilities and uid, ``mount``, ``umount -l /tmp``, remount ``/`` read-write,
see a host process, read the hidden credential stores and logs, write into ``$DSH_HOME``.
Nothing on the host changes: mounts happen in the probe's own namespace, and the one file it
tries to create in ``$DSH_HOME`` is removed (and reported) if it ever appears there.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError
from .confine import Bubblewrap, allowed_env, bwrap_argv
from .sandbox_mounts import dsh_home, mount_plan

__all__ = ["ProbeResult", "probe"]

_SCRIPT = r"""
host_pid=$1; token=$2; shift 2
echo "uid=$(id -u)"
echo "capeff=$(awk '/^CapEff/{print $2}' /proc/self/status)"
echo "init_capeff=$(awk '/^CapEff/{print $2}' /proc/1/status)"
if mount -t tmpfs none /mnt 2>/dev/null; then echo mount=yes; else echo mount=no; fi
if umount -l /tmp 2>/dev/null; then echo umount=yes; else echo umount=no; fi
if mount -o remount,rw,bind / 2>/dev/null; then echo remount=yes; else echo remount=no; fi
if [ -e "/proc/$host_pid" ] && kill -0 "$host_pid" 2>/dev/null; then echo hostpid=visible; else echo hostpid=hidden; fi
echo "procs=$(ls /proc | grep -c '^[0-9]')"
for p in "$@"; do
  case "$p" in
    D:*) d=${p#D:}; if [ -n "$(ls -A "$d" 2>/dev/null)" ]; then echo "readable=$d"; fi ;;
    F:*) f=${p#F:}; if [ -s "$f" ] && head -c1 "$f" >/dev/null 2>&1; then echo "readable=$f"; fi ;;
    W:*) w=${p#W:}; if touch "$w/.dsh-probe-$token" 2>/dev/null; then echo "wrote_in_tmpfs=$w"; fi ;;
  esac
done
echo end=1
"""


@dataclass
class ProbeResult:
    """What the probe sandbox measured (``error`` when it could not run at all)."""

    workspace: str
    uid: int | None = None
    capeff: str = ""
    init_capeff: str = ""
    mount: bool = True
    umount: bool = True
    remount: bool = True
    host_pid_visible: bool = True
    procs: int = 0
    readable: list[str] = field(default_factory=list)
    home_writable: bool = True
    hidden_dirs: int = 0
    hidden_files: int = 0
    home_workspace: bool = False
    refused: str = ""  # WORKSPACE_UNSAFE message for the requested workspace
    error: str = ""

    @property
    def capabilities(self) -> bool:
        return self.capeff.strip("0") != "" or self.init_capeff.strip("0") != ""


def _run(bw: Bubblewrap, ws: Path, result: ProbeResult) -> None:
    plan = mount_plan(ws)
    result.hidden_dirs, result.hidden_files = len(plan.hidden_dirs), len(plan.hidden_files)
    result.home_workspace = plan.home_workspace
    home = dsh_home()
    token = secrets.token_hex(6)
    targets = [f"D:{d}" for d in plan.hidden_dirs if d != "/tmp"]
    targets += [f"F:{f}" for f in plan.hidden_files] + [f"W:{home}"]
    argv = bwrap_argv(bw, ws, allowed_env(home="/tmp"),
                      ["/bin/sh", "-c", _SCRIPT, "probe", str(os.getpid()), token, *targets],
                      network=False)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=allowed_env(home="/tmp"))
    except (OSError, subprocess.SubprocessError) as exc:
        result.error = f"the probe sandbox did not run: {exc}"
        return
    leaked = Path(home) / f".dsh-probe-{token}"
    result.home_writable = leaked.exists()
    if result.home_writable:
        leaked.unlink(missing_ok=True)
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    if values.get("end") != "1":
        result.error = f"the probe sandbox failed (exit {done.returncode}): {done.stderr.strip()[:300]}"
        return
    result.uid = int(values["uid"]) if values.get("uid", "").isdigit() else None
    result.capeff, result.init_capeff = values.get("capeff", "?"), values.get("init_capeff", "?")
    result.mount, result.umount = values.get("mount") != "no", values.get("umount") != "no"
    result.remount = values.get("remount") != "no"
    result.host_pid_visible = values.get("hostpid") != "hidden"
    result.procs = int(values.get("procs", "0") or 0)
    result.readable = [line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith("readable=")]


def probe(bw: Bubblewrap, workspace: Path) -> ProbeResult:
    """Measure the sandbox a ``bash`` call in ``workspace`` would get (blocking, a few ms)."""
    ws = Path(os.path.realpath(workspace))
    result = ProbeResult(str(ws))
    try:
        mount_plan(ws)
    except ToolError as exc:  # bash is refused there: measure a scratch workspace instead
        result.refused = exc.message
        with tempfile.TemporaryDirectory(prefix="dsh-probe-") as scratch:
            _run(bw, Path(os.path.realpath(scratch)), result)
        return result
    _run(bw, ws, result)
    return result
