"""A probe sandbox for ``doctor``: every protection of the bash sandbox measured, not assumed.

:func:`probe` starts the same bwrap command line a ``bash`` call gets (same mounts, same
identity, same environment) with a small ``/bin/sh`` script that *tries* what a hostile command
would: read its capabilities, its uid and the host uid that maps to it, ``mount``,
``umount -l /tmp``, remount ``/`` read-write, see a host process, read the hidden folders and logs
and every entry of the hidden homes outside the allow-list (:func:`unlisted`),
write into ``$DSH_HOME``, and make a setuid/setgid file in the workspace (``chmod 4755``,
``chmod g+s``, ``install -m 4755``). Nothing on the host changes: mounts happen in the probe's
own namespace, and the files it tries to create in ``$DSH_HOME`` and the workspace are removed
(and reported) if they ever appear there.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError
from . import seccomp
from .confine import Bubblewrap, allowed_env, bwrap_argv
from .sandbox_allow import under
from .sandbox_mounts import MountPlan, dsh_home, mount_plan

__all__ = ["ProbeResult", "probe", "unlisted"]

_SCRIPT = r"""
host_pid=$1; token=$2; shift 2
echo "uid=$(id -u)"
echo "uidmap=$(awk -v u="$(id -u)" '$1 <= u && u < $1 + $3 {print $2 + u - $1}' /proc/self/uid_map)"
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
    S:*) made=no; tried=no
      for s in "${p#S:}" /tmp; do  # the workspace; /tmp (the sandbox's own) if it is not writable
        for how in chmod4755 chmodgs install; do
          f="$s/.dsh-probe-suid-$how-$token"
          case $how in
            chmod4755) cp /bin/true "$f" 2>/dev/null && tried=$s; chmod 4755 "$f" 2>/dev/null ;;
            chmodgs) cp /bin/true "$f" 2>/dev/null && tried=$s; chmod g+s "$f" 2>/dev/null ;;
            install) install -m 4755 /bin/true "$f" 2>/dev/null && tried=$s ;;
          esac
          if [ -u "$f" ] || [ -g "$f" ]; then made=yes; fi
          rm -f "$f"
        done
        [ "$tried" = no ] || break
      done
      echo "setuid_tried=$tried"; echo "setuid=$made" ;;
  esac
done
echo end=1
"""


@dataclass
class ProbeResult:
    """What the probe sandbox measured (``error`` when it could not run at all)."""

    workspace: str
    uid: int | None = None
    host_uid: int | None = None  # the host uid the sandbox's uid maps to
    setuid: bool = True  # a setuid/setgid file could be made in the workspace
    setuid_where: str = ""  # where the probe could make a file at all (the workspace, else /tmp)
    seccomp: str = ""  # why the setuid filter is missing ("" when it is there)
    home_probed: int = 0  # entries of the hidden homes outside the allow-list, tried one by one
    allowed: list[str] = field(default_factory=list)
    homes: list[str] = field(default_factory=list)
    path_hidden: list[str] = field(default_factory=list)  # $PATH folders the sandbox hides
    refused_allow: list[str] = field(default_factory=list)
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


def unlisted(plan: MountPlan, limit: int = 300) -> list[str]:
    """Real entries of the hidden homes that the sandbox must not show (for the probe): each is
    hidden with nothing shown inside it. Walks down only where the plan shows something again
    inside a hidden folder, or hides something inside a shown one."""
    shown = [m.path for m in plan.mounts if m.kind != "hide"]
    hides = [m.path for m in plan.mounts if m.kind == "hide"]
    out: list[str] = []

    def visit(path: str) -> None:
        if len(out) >= limit:
            return
        inner = shown if plan.state(path) == "hide" else hides
        if not any(under(p, path) and p != path for p in inner):
            if plan.state(path) == "hide":
                out.append(path)
            return
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for name in names:
            child = os.path.join(path, name)
            if not os.path.islink(child):
                visit(child)

    for home in plan.homes:
        visit(home)
    return out


def _targets(plan: MountPlan) -> list[str]:
    """What must read as empty inside: hidden folders with nothing shown again inside them,
    hidden files, and the entries of the hidden homes outside the allow-list."""
    shown = [m.path for m in plan.mounts if m.kind != "hide"]
    hidden = [d for d in plan.hidden_dirs if d != "/tmp" and not any(under(s, d) for s in shown)]
    out = [f"D:{d}" for d in hidden] + [f"F:{f}" for f in plan.hidden_files]
    for path in unlisted(plan):
        item = f"D:{path}" if os.path.isdir(path) else f"F:{path}"
        if item not in out:
            out.append(item)
    return out


def _run(bw: Bubblewrap, ws: Path, result: ProbeResult) -> None:
    plan = mount_plan(ws)
    result.hidden_dirs, result.hidden_files = len(plan.hidden_dirs), len(plan.hidden_files)
    result.home_workspace = plan.home_workspace
    result.allowed = [f"{a.path} ({a.why})" for a in plan.allowed]
    result.homes = plan.homes
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        real = os.path.realpath(entry) if entry else ""
        if real and os.path.isdir(real) and plan.state(real) == "hide" and real not in result.path_hidden:
            result.path_hidden.append(real)
    result.refused_allow = [f"{a.path} ({a.why})" for a in plan.refused]
    home = dsh_home()
    token = secrets.token_hex(6)
    targets = _targets(plan)
    result.home_probed = sum(1 for t in targets if any(under(t[2:], h) for h in plan.homes))
    targets += [f"W:{home}", f"S:{ws}"]
    result.seccomp = "" if seccomp.available() else seccomp.unavailable_reason()
    env = allowed_env(home="/tmp")
    try:
        with seccomp.filter_fd() as fd:
            argv = bwrap_argv(bw, ws, env, ["/bin/sh", "-c", _SCRIPT, "probe", str(os.getpid()), token, *targets],
                              network=False, seccomp_fd=fd)
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env,
                                  pass_fds=() if fd is None else (fd,))
    except (OSError, subprocess.SubprocessError) as exc:
        result.error = f"the probe sandbox did not run: {exc}"
        return
    leaked = Path(home) / f".dsh-probe-{token}"
    result.home_writable = leaked.exists()
    if result.home_writable:
        leaked.unlink(missing_ok=True)
    for left in ws.glob(f".dsh-probe-suid-*-{token}"):
        left.unlink(missing_ok=True)
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    if values.get("end") != "1":
        result.error = f"the probe sandbox failed (exit {done.returncode}): {done.stderr.strip()[:300]}"
        return
    result.uid = int(values["uid"]) if values.get("uid", "").isdigit() else None
    result.host_uid = int(values["uidmap"]) if values.get("uidmap", "").isdigit() else None
    result.setuid = values.get("setuid") != "no"
    result.setuid_where = "" if values.get("setuid_tried", "no") == "no" else values["setuid_tried"]
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
