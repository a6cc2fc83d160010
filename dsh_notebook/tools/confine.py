"""How a tool's subprocess is confined: bubblewrap where the platform has it, else a fallback.

With ``bwrap`` (Linux, Debian's ``bubblewrap``) a command runs in its **own PID namespace**
(no view of the host's processes or their ``/proc/*/environ``), with ``--die-with-parent`` (when
the host dies, so does the sandbox, and with its PID 1 every process in it, detached ones
included), **no capabilities** (``--cap-drop ALL``; as root also uid/gid 1000 in a user
namespace: ``mount``, ``umount``, a remount of ``/`` fail), a **seccomp filter** that refuses
setuid/setgid bits on any file (:mod:`.seccomp`; as root the sandbox's uid is host uid 0, so the
files it writes stay the user's), the whole file system **read-only**, only the **workspace
writable**, every home hidden but for a read-only allow-list (the interpreter, its packages,
``DSH_SANDBOX_READ``), and ``/tmp``, ``$DSH_HOME``, IPython's and Jupyter's runtime folders
hidden (:mod:`.sandbox_mounts`, :mod:`.sandbox_allow`; also for a workspace of exactly
``$HOME``). The network is shared unless
:func:`configure` / ``DSH_SANDBOX_NETWORK=0`` turns it off. bwrap itself is started with the
same minimal environment as the command (bwrap's PID 1 keeps the environment bwrap got, readable
as ``/proc/1/environ`` inside), never the host's.

Without bwrap the command gets the allow-listed environment, its own process group, runs under
:mod:`.reaper` (a child subreaper that ends everything the command leaves), and a
marker variable (:data:`MARKER_VAR`) that every descendant inherits: when the call ends,
:func:`kill_marked` kills every process that still carries the call's marker — ``setsid``,
``nohup`` and double-forked ones included — and the :data:`WATCHDOG` child does the same when
the host process dies. The product says once that no sandbox is active (:func:`warn_once`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..redaction import is_secret_name, url_password
from . import seccomp
from .git_guard import git_config_env
from .sandbox_mounts import mount_plan
from .watchdog import MARKER_VAR, WATCHDOG, kill_marked, marked_pids

__all__ = [
    "MARKER_VAR", "WATCHDOG", "Bubblewrap", "Confined", "allowed_env", "bubblewrap", "bwrap_argv", "configure",
    "confined_command",
    "hidden_paths", "identity_args", "kill_marked", "marked_pids", "network_enabled", "no_sandbox_reason", "warn_once",
]
ENV_ALLOW = frozenset({
    "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "COLORTERM",
    "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONIOENCODING", "NODE_OPTIONS", "NO_COLOR",
})
ENV_FORCED = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
EXTRA_ENV_VAR = "DSH_SANDBOX_ENV"  # comma-separated extra variable names to pass through
NETWORK_VAR = "DSH_SANDBOX_NETWORK"
DISABLE_VAR = "DSH_SANDBOX"  # "0"/"off": never use bwrap (the fallback, said once)
SANDBOX_UID = 1000  # the uid/gid commands get inside the sandbox when the host runs as root
REAPER = str(Path(__file__).resolve().with_name("reaper.py"))
_network_override: bool | None = None
_warned = threading.Event()


def configure(*, network: bool | None = None) -> None:
    """Process-wide sandbox settings (the CLI flag and the notebook traitlet set these)."""
    global _network_override
    _network_override = network


def _falsy(raw: str | None) -> bool:
    return raw is not None and raw.strip().lower() in {"0", "false", "no", "off"}


def network_enabled() -> bool:
    """Whether sandboxed commands may use the network (default yes)."""
    if _network_override is not None:
        return _network_override
    return not _falsy(os.environ.get(NETWORK_VAR))


def allowed_env(base: Mapping[str, str] | None = None, *, home: str | None = None) -> dict[str, str]:
    """The environment a tool's subprocess gets: an allow-list, never a credential.

    Kept: :data:`ENV_ALLOW`, ``LC_*``, and names listed in ``DSH_SANDBOX_ENV``, unless the name
    looks like a secret or the value is a URL with a password. ``HOME`` is ``home`` when given.
    """
    src = os.environ if base is None else base
    extra = {n.strip() for n in src.get(EXTRA_ENV_VAR, "").split(",") if n.strip()}
    env: dict[str, str] = {}
    for name, value in src.items():
        if not (name in ENV_ALLOW or name.startswith("LC_") or name in extra or name == "HOME"):
            continue
        if is_secret_name(name) or url_password(value) is not None:
            continue
        env[name] = value
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if home is not None:
        env["HOME"] = home
    env.update(ENV_FORCED)
    env.update(git_config_env(env))  # issue 36: git without the repository's programs (.git_guard)
    return env


@dataclass(frozen=True)
class Bubblewrap:
    path: str
    version: str
    userns: bool = False  # bwrap can make a user namespace here (used to drop root's uid)


@lru_cache(maxsize=1)
def _probe(path: str) -> Bubblewrap | None:
    """bwrap at ``path`` if it really can make a sandbox here (user namespaces may be off)."""
    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10, env={})
        ok = subprocess.run(
            [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
             "--dev", "/dev", "--clearenv", "/bin/true"],
            capture_output=True, timeout=10, env={},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if ok.returncode != 0:
        return None
    try:
        userns = subprocess.run(
            [path, "--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
             "--cap-drop", "ALL", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc",
             "--dev", "/dev", "--clearenv", "/bin/true"],
            capture_output=True, timeout=10, env={},
        ).returncode == 0
    except (OSError, subprocess.SubprocessError):
        userns = False
    return Bubblewrap(path, (ver.stdout.strip() or "bubblewrap").split()[-1], userns)


def bubblewrap() -> Bubblewrap | None:
    """The usable bubblewrap of this machine, or ``None`` (not Linux, not installed, disabled)."""
    if not sys.platform.startswith("linux") or _falsy(os.environ.get(DISABLE_VAR)):
        return None
    path = shutil.which("bwrap")
    return _probe(path) if path else None


def warn_once(reason: str) -> bool:
    """Print, once per process, that commands run without a sandbox. True when it printed."""
    if _warned.is_set():
        return False
    _warned.set()
    print(
        f"dsh: WARNING: no sandbox for tool commands ({reason}); bash runs unconfined (file system, "
        "processes and network of this user) with an allow-listed environment, its processes "
        "ended with the call. Install bubblewrap (apt-get install bubblewrap) for a real sandbox; "
        "`python -m dsh_notebook doctor` shows what is active.",
        file=sys.stderr,
        flush=True,
    )
    return True


def no_sandbox_reason() -> str:
    if not sys.platform.startswith("linux"):
        return f"bubblewrap is Linux-only; this is {sys.platform}"
    if _falsy(os.environ.get(DISABLE_VAR)):
        return f"{DISABLE_VAR}=0"
    if shutil.which("bwrap") is None:
        return "bwrap not found on PATH"
    return "bwrap cannot create namespaces here"


def hidden_paths(workspace: Path) -> tuple[list[str], list[str]]:
    """(directories covered by an empty tmpfs, files covered by ``/dev/null``) in the sandbox
    for ``workspace`` (:mod:`.sandbox_mounts`). Raises ``WORKSPACE_UNSAFE`` where nothing could
    stay hidden."""
    plan = mount_plan(workspace)
    return plan.hidden_dirs, plan.hidden_files


def identity_args(bw: Bubblewrap, euid: int | None = None) -> list[str]:
    """No capabilities inside, ever; as root also an unprivileged uid/gid in a user namespace
    (where the kernel allows one), so ``mount``, ``umount`` and a remount of ``/`` fail."""
    args = ["--cap-drop", "ALL"]
    if (os.geteuid() if euid is None else euid) == 0 and bw.userns:
        args = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), *args]
    return args


def bwrap_argv(bw: Bubblewrap, workspace: Path, env: Mapping[str, str], argv: list[str],
               *, network: bool, seccomp_fd: int | None, euid: int | None = None) -> list[str]:
    """The bwrap command line that runs ``argv`` confined to ``workspace`` (the mounts of
    :func:`.sandbox_mounts.mount_plan`, in their order), with the seccomp program read from
    ``seccomp_fd`` (:func:`.seccomp.filter_fd`; pass it with ``pass_fds``). ``euid``: the user
    who will start bwrap (default this process's)."""
    plan = mount_plan(workspace, euid)
    cmd = [bw.path, "--unshare-all"]
    if network:
        cmd.append("--share-net")
    cmd += identity_args(bw, euid)
    cmd += ["--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", *plan.args, "--chdir", str(workspace)]
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    cmd.append("--clearenv")
    for name, value in env.items():
        cmd += ["--setenv", name, value]
    return [*cmd, "--", *argv]


@dataclass
class Confined:
    """How to start a tool's command: ``argv`` with ``env``, keeping ``pass_fds`` open in the
    child (bwrap's seccomp program). :meth:`close` once the process has started."""

    argv: list[str]
    env: dict[str, str]
    sandboxed: bool
    pass_fds: tuple[int, ...] = ()
    _stack: contextlib.ExitStack | None = None

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None


def confined_command(argv: list[str], workspace: Path, base_env: Mapping[str, str] | None,
                     marker: str) -> Confined:
    """How to start ``argv`` for a tool call in ``workspace``.

    Sandboxed: the bwrap command line, and bwrap itself gets the same minimal environment (its
    PID 1 keeps what bwrap was given), with the seccomp program that refuses setuid/setgid
    (:mod:`.seccomp`; said once where libseccomp is missing). Unconfined (said once): ``argv``
    under :mod:`.reaper`, registered with the :data:`WATCHDOG`. Either way the environment carries
    ``marker``. Blocking (probes bwrap once, may start the watchdog): call it off the event loop.
    """
    bw = bubblewrap()
    if bw is None:
        warn_once(no_sandbox_reason())
        env = allowed_env(base_env)
        env[MARKER_VAR] = marker
        if sys.platform.startswith("linux"):  # a subreaper that ends whatever the command leaves
            env["DSH_REAPER_PARENT"] = str(os.getpid())
            argv = [sys.executable, "-S", "-I", REAPER, *argv]
        WATCHDOG.register(marker)  # the host's own death: the watchdog ends what is left
        return Confined(argv, env, False)
    env = allowed_env(base_env, home="/tmp")
    env[MARKER_VAR] = marker
    stack = contextlib.ExitStack()
    fd = stack.enter_context(seccomp.filter_fd())
    if fd is None:
        _warn_no_seccomp()
    try:
        cmd = bwrap_argv(bw, workspace, env, argv, network=network_enabled(), seccomp_fd=fd)
    except BaseException:
        stack.close()
        raise
    return Confined(cmd, dict(env), True, () if fd is None else (fd,), stack)


_seccomp_warned = threading.Event()


def _warn_no_seccomp() -> None:
    if _seccomp_warned.is_set():
        return
    _seccomp_warned.set()
    print(f"dsh: WARNING: {seccomp.unavailable_reason()}: commands in the sandbox can make setuid/setgid "
          "files in the workspace (as root: root's). `python -m dsh_notebook doctor` shows it.",
          file=sys.stderr, flush=True)
