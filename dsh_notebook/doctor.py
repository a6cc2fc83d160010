"""``python -m dsh_notebook doctor`` / ``%dsh doctor``: which protections are active here.

One line per protection, measured on this machine: a probe sandbox (the bwrap command line a
``bash`` call in this folder gets) reports its uid, capabilities, whether ``mount``, ``umount``
and a remount of ``/`` fail, whether host processes are visible, whether each hidden path is
empty and ``$DSH_HOME`` unwritable; a missing protection is shown as ``MISSING: …``. Then process
cleanup; secret redaction; the grep engine; the file tools' refusals; session locking; the
modes of ``$DSH_HOME``. Nothing here changes anything; the exit code is always 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import stat
import sys
from pathlib import Path

from .config import settings_from_env
from .errors import DshError
from .redaction import REDACTOR, is_secret_name
from .tools import confine
from .tools.sandbox_probe import probe


def _mode(path: Path) -> str:
    try:
        return oct(stat.S_IMODE(path.stat().st_mode))[2:].rjust(4, "0")
    except OSError:
        return "missing"


def _session_locking() -> str:
    if importlib.util.find_spec("fcntl") is None:
        return "unavailable (no fcntl on this platform)"
    session_dir = Path(__file__).resolve().parent / "session"
    for source in sorted(session_dir.glob("*.py")):
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            continue
        if "SESSION_BUSY" in text:
            return "on: an OS lock per session log; a second writer gets SESSION_BUSY"
    return "not detected in this build (one writer per session is not enforced)"


def _log_modes(sessions: Path) -> str:
    try:
        logs = sorted(sessions.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-20:]
    except OSError:
        logs = []
    if not logs:
        return "no logs yet"
    modes = sorted({_mode(p) for p in logs})
    return f"logs {'/'.join(modes)}"


def _grep_engine() -> str:
    try:
        import re2
    except ImportError:
        return "unavailable: google-re2 is not installed (grep cannot run)"
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("google-re2")
    except PackageNotFoundError:
        ver = "?"
    del re2
    return f"RE2 (google-re2 {ver}): linear time, own deadline, off the host loop"


def _missing(ok: bool, good: str, bad: str) -> str:
    return good if ok else f"MISSING: {bad}"


def _sandbox_rows(bw: confine.Bubblewrap) -> list[tuple[str, str]]:
    """The bash sandbox, measured by a probe sandbox in this folder (:mod:`.tools.sandbox_probe`)."""
    m = probe(bw, Path.cwd())
    rows = [("sandbox", f"bubblewrap {bw.version} ({bw.path})")]
    if m.refused:
        rows.append(("workspace", f"REFUSED here (WORKSPACE_UNSAFE): {m.refused}; measured in a scratch folder"))
    elif m.home_workspace:
        rows.append(("workspace", "this folder is $HOME: its top level and every dotfile read-only, its "
                                  "folders writable (but ~/bin), credential stores hidden"))
    if m.error:
        return [*rows, ("probe", f"MISSING: {m.error}")]
    host_uid = os.geteuid()
    uid_note = "(the host runs as root: mapped to an unprivileged uid)" if host_uid == 0 and m.uid else (
        "(ROOT inside: no user namespace here; capabilities are dropped)" if m.uid == 0 else "")
    rows += [
        ("sandbox uid", f"{m.uid} inside, {host_uid} on the host {uid_note}".rstrip()),
        ("capabilities", _missing(not m.capabilities, "none (CapEff 0, also bwrap's PID 1)",
                                  f"CapEff {m.capeff} (PID 1 {m.init_capeff}): commands keep capabilities")),
        ("mount, umount", _missing(not (m.mount or m.umount), "refused inside (measured)",
                                   "mount or umount -l /tmp works inside: hidden paths can be uncovered")),
        ("remount /", _missing(not m.remount, "read-only, remount refused (measured)",
                               "mount -o remount,rw / works inside: the host is writable")),
        ("PID namespace", _missing(not m.host_pid_visible,
                                   f"on: {m.procs} processes visible inside, none of the host (no ptrace "
                                   "of host processes, no /proc/*/environ)",
                                   "the host's processes are visible inside")),
        ("file system", _missing(not m.readable, f"read-only but for the workspace; {m.hidden_dirs} dirs and "
                                 f"{m.hidden_files} files hidden (/tmp, $DSH_HOME, credential stores, ~/.config, "
                                 "Jupyter runtime, ~/.ipython), each measured empty",
                                 "readable inside: " + ", ".join(m.readable[:8]))),
        ("$DSH_HOME", _missing(not m.home_writable, "hidden and not writable from the sandbox (measured)",
                               "a file written inside the sandbox appeared in $DSH_HOME")),
        ("network", f"on ({confine.NETWORK_VAR}=0 or --no-network turns it off)" if confine.network_enabled()
         else f"off ({confine.NETWORK_VAR}=0 or --no-network)"),
        ("process cleanup", "PID namespace + --die-with-parent; marker scan when a call ends"),
    ]
    return rows


def protections() -> list[tuple[str, str]]:
    """``(name, state)`` for every protection, as measured now."""
    bw = confine.bubblewrap()
    env_secret_names = sorted(k for k in os.environ if is_secret_name(k))
    REDACTOR.refresh_from_env()
    try:
        settings = settings_from_env()
        settings.resolved_key()
        home, sessions = settings.home, settings.sessions_dir
    except DshError:  # a bad DSH_TIMEOUT must not hide the rest of the report
        home = Path(os.environ.get("DSH_HOME") or "~/.dsh").expanduser()
        sessions = home / "sessions"
    rows: list[tuple[str, str]] = []
    if bw is not None:
        rows += _sandbox_rows(bw)
    else:
        rows += [
            ("sandbox", f"none: {confine.no_sandbox_reason()}" + (
                "" if os.environ.get(confine.DISABLE_VAR) else " (apt-get install bubblewrap for a real sandbox)")),
            ("PID namespace", "off: commands can see the host's processes"),
            ("file system", "unconfined for bash (file tools stay in the workspace)"),
            ("network", "unrestricted (no sandbox to turn it off)"),
            ("process cleanup", "subreaper + process group + marker scan when a call ends; a watchdog when the host exits"),
        ]
    rows += [
        ("environment", f"allow-list ({len(confine.ENV_ALLOW)} names, LC_*, ${confine.EXTRA_ENV_VAR}); "
                        f"{len(env_secret_names)} secret-named variables here are never passed"),
        ("redaction", f"on: {len(REDACTOR.values)} known secret values + key/token/URL-credential shapes, "
                      "in tool results, model text, errors and progress"),
        ("grep engine", _grep_engine()),
        ("file tools", "FIFOs, devices, sockets and hard-linked files refused; I/O off the host loop, bounded reads"),
        ("session locking", _session_locking()),
        ("file modes", f"$DSH_HOME {home} {_mode(home)}; sessions/ {_mode(sessions)}; {_log_modes(sessions)}"),
    ]
    return rows


def render() -> str:
    rows = protections()
    width = max(len(name) for name, _ in rows) + 2
    return "\n".join(f"{name.ljust(width)}{state}" for name, state in rows)


def doctor_main(args: argparse.Namespace | None = None) -> int:
    print(render())
    sys.stdout.flush()
    return 0
