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
from .tools.sandbox_allow import READ_VAR
from .tools.sandbox_probe import ProbeResult, probe


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


def _setuid_row(m: ProbeResult) -> str:
    where = "the workspace" if m.setuid_where == m.workspace else (m.setuid_where or "nowhere writable")
    if not m.setuid_where:
        return "not measured: the probe could write no file (workspace and /tmp read-only)"
    if m.setuid:
        reason = f" ({m.seccomp})" if m.seccomp else ""
        return f"MISSING: a setuid/setgid file was made in {where} (chmod 4755 / g+s / install -m 4755){reason}"
    return (f"refused: chmod 4755, chmod g+s and install -m 4755 in {where} made no setuid/setgid file "
            "(seccomp filter, measured)")


def _home_row(m: ProbeResult) -> str:
    shown = ", ".join(m.allowed[:6]) + (f" and {len(m.allowed) - 6} more" if len(m.allowed) > 6 else "")
    tail = (f"; shown read-only: {shown or 'nothing'}; add paths with {READ_VAR}=PATH:PATH")
    if m.refused_allow:
        tail += f"; not shown (a home, $DSH_HOME or a credential store): {', '.join(m.refused_allow[:4])}"
    if m.path_hidden:
        tail += f"; PATH folders hidden inside (add them to {READ_VAR} to use them): {', '.join(m.path_hidden[:6])}"
    home_leaks = [p for p in m.readable if any(p == h or p.startswith(h.rstrip('/') + '/') for h in m.homes)]
    if home_leaks:
        return "MISSING: readable outside the allow-list: " + ", ".join(home_leaks[:8]) + tail
    homes = [h for h in m.homes if h != m.workspace] + (["this home's dot entries"] if m.home_workspace else [])
    return (f"hidden: {', '.join(homes)} — {m.home_probed} entries outside the allow-list and the "
            f"workspace tried, none readable (measured)" + tail)


def _sandbox_rows(bw: confine.Bubblewrap) -> list[tuple[str, str]]:
    """The bash sandbox, measured by a probe sandbox in this folder (:mod:`.tools.sandbox_probe`)."""
    m = probe(bw, Path.cwd())
    rows = [("sandbox", f"bubblewrap {bw.version} ({bw.path})")]
    if m.refused:
        rows.append(("workspace", f"REFUSED here (WORKSPACE_UNSAFE): {m.refused}; measured in a scratch folder"))
    elif m.home_workspace:
        rows.append(("workspace", "this folder is a home: its top level read-only, its plain folders and "
                                  f"files writable (but ~/bin), its dot entries hidden unless on the allow-list ({READ_VAR})"))
    if m.error:
        return [*rows, ("probe", f"MISSING: {m.error}")]
    host_uid = os.geteuid()
    mapped = "?" if m.host_uid is None else str(m.host_uid)
    uid_note = ("(the host runs as root: no capabilities, and files it writes stay root's — the "
                "user's)") if mapped == "0" and m.uid != 0 else (
        "(ROOT inside: no user namespace here; capabilities are dropped)" if m.uid == 0 else "")
    rows += [
        ("sandbox uid", f"{m.uid} inside = uid {mapped} on the host (this process: {host_uid}) {uid_note}".rstrip()),
        ("setuid files", _setuid_row(m)),
        ("home", _home_row(m)),
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
                                 f"{m.hidden_files} files hidden (/tmp, $DSH_HOME, the homes, Jupyter runtime, "
                                 "credential stores inside what is shown), each measured empty",
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
