"""What the bash sandbox shows, hides or keeps read-only, and in which order bwrap mounts it.

Hidden (issue 35: an allow-list, not a list of known credential files): **every home** —
``$HOME``, ``/root``, ``/home`` and other login users' homes (:func:`.sandbox_allow.private_homes`)
— then ``/tmp``, ``$DSH_HOME`` (session logs, ``mcp.json``, the search index), the Jupyter runtime
folder with the kernels' connection files, ``$XDG_CONFIG_HOME``/``$XDG_RUNTIME_DIR``, and
``/etc/shadow``-like files. Shown again, **read-only**: the allow-list of :mod:`.sandbox_allow`
(the interpreter and its packages, ``DSH_SANDBOX_READ``). Shown **writable**: the workspace.
Inside what is shown, the known credential stores stay hidden (a second layer).

bwrap applies its mount options **in order**, and a bind of a host folder uncovers whatever an
earlier mount hid below it. Every mount here is therefore placed by the depth of its target:
a folder before anything inside it, and at the same path a hide after a show. So a workspace
inside a hidden home (``~/proj``) is bound after the home's empty tmpfs, and a credential store
inside the workspace is hidden after the workspace's bind.

A workspace of exactly a home (Jupyter started in ``~``, ``run --cwd ~``, root working in
``/home/alice``): its top level is read-only, its plain entries writable one by one (but ``bin``,
which ``~/.profile`` puts on ``PATH``), and its dot entries — shell startup files, ``~/.local``,
``~/.cache``, every credential store, known or not — hidden unless allowed (then read-only).

Refused with ``ToolError(code="WORKSPACE_UNSAFE")``: a workspace that is ``$DSH_HOME`` or inside
it, and one that strictly contains a home (``/``, ``/home``): nothing could be kept hidden there.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ToolError
from .sandbox_allow import (
    CREDENTIAL_DIRS,
    CREDENTIAL_FILES,
    Allowed,
    allow_list,
    credential_paths,
    private_homes,
    under,
)

__all__ = ["CREDENTIAL_DIRS", "CREDENTIAL_FILES", "MountPlan", "dsh_home", "mount_plan"]

SYSTEM_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SYSTEM_GLOBS = ("/etc/ssh/ssh_host_*_key",)
# non-dot entries of a home workspace that later run code outside the sandbox: read-only
RUNS_LATER = ("bin",)
MAX_WRITABLE_ENTRIES = 500  # plain entries of a home workspace bound writable one by one
_SHOW_RO, _SHOW_RW, _HIDE = "ro", "rw", "hide"


@dataclass(frozen=True)
class Mount:
    path: str
    kind: str  # "ro", "rw" or "hide"

    def args(self) -> list[str]:
        if self.kind == _SHOW_RO:
            return ["--ro-bind", self.path, self.path]
        if self.kind == _SHOW_RW:
            return ["--bind", self.path, self.path]
        if os.path.isdir(self.path):
            return ["--tmpfs", self.path]
        return ["--ro-bind", "/dev/null", self.path]


@dataclass
class MountPlan:
    """The bwrap mounts, in order, and what they cover (for ``doctor`` and its probe)."""

    workspace: str
    mounts: list[Mount]
    allowed: list[Allowed]
    refused: list[Allowed]
    homes: list[str]
    readonly: list[str] = field(default_factory=list)
    home_workspace: bool = False

    @property
    def args(self) -> list[str]:
        return [a for m in self.mounts for a in m.args()]

    @property
    def hidden_dirs(self) -> list[str]:
        return [m.path for m in self.mounts if m.kind == _HIDE and os.path.isdir(m.path)]

    @property
    def hidden_files(self) -> list[str]:
        return [m.path for m in self.mounts if m.kind == _HIDE and not os.path.isdir(m.path)]

    def state(self, path: str) -> str:
        """``ro``, ``rw`` or ``hide``: what the sandbox makes of the real ``path``."""
        return _state(self.mounts, path)


def _state(mounts: list[Mount], path: str) -> str:
    """The kind of the last mount (in bwrap's order) whose target holds ``path``; the root is
    read-only."""
    for m in reversed(mounts):
        if under(path, m.path):
            return m.kind
    return _SHOW_RO


def dsh_home() -> str:
    return os.path.realpath(os.environ.get("DSH_HOME") or os.path.expanduser("~/.dsh"))


def _runtime_dirs() -> list[str]:
    """Jupyter's runtime folder (kernel connection files), IPython's folder and the XDG folders
    wherever they were moved (their default places are inside a home)."""
    out = [os.environ.get(v, "") for v in ("JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "XDG_CONFIG_HOME",
                                          "XDG_RUNTIME_DIR")]
    data = os.environ.get("JUPYTER_DATA_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share"), "jupyter")
    out.append(os.path.join(data, "runtime"))
    return [os.path.realpath(p) for p in out if p and os.path.isdir(p)]


def _depth(path: str) -> int:
    return 0 if path == "/" else path.rstrip("/").count("/")


def check_workspace(ws: str, euid: int | None = None) -> None:
    """Refuse workspaces where nothing could stay hidden (``WORKSPACE_UNSAFE``)."""
    home_of_dsh = dsh_home()
    if under(ws, home_of_dsh):
        raise ToolError(
            f"the workspace {ws} is inside $DSH_HOME ({home_of_dsh}), which holds every session's log "
            "and the MCP configuration; the sandbox keeps it hidden and read-only, so bash cannot run "
            "here. Start in another folder (run --cwd DIR, or Jupyter in your project folder)",
            code="WORKSPACE_UNSAFE")
    for home in [*private_homes(euid), "/"]:
        if home != ws and under(home, ws) or ws == "/":
            raise ToolError(
                f"the workspace {ws} contains the home folder {home}: the sandbox cannot keep the "
                "credential stores and other users' files hidden in a workspace that wide. Start in "
                "a project folder (run --cwd DIR, or Jupyter in your project folder)",
                code="WORKSPACE_UNSAFE")


def _ensure_dsh_home(ws: str) -> None:
    """Create a missing ``$DSH_HOME`` (0700) whose nearest existing folder is in the workspace,
    so that it is hidden like an existing one and the sandbox cannot create ``mcp.json`` there."""
    path = dsh_home()
    parent = path
    while not os.path.exists(parent) and parent != "/":
        parent = os.path.dirname(parent)
    if parent != path and under(parent, ws):
        os.makedirs(path, mode=0o700, exist_ok=True)


def _home_entries(ws: str, allowed: list[str]) -> list[Mount]:
    """A workspace that is a home: plain entries writable, dot entries hidden unless allowed."""
    out = [Mount(ws, _SHOW_RO)]
    names = sorted(os.listdir(ws))
    plain = [n for n in names if not n.startswith(".") and n not in RUNS_LATER]
    for name in plain[:MAX_WRITABLE_ENTRIES]:
        path = os.path.join(ws, name)
        if not os.path.islink(path):
            out.append(Mount(path, _SHOW_RW))
    for name in names:
        if not name.startswith("."):
            continue
        path = os.path.join(ws, name)
        real = os.path.realpath(path)
        if os.path.islink(path):
            # where it leads decides what is seen: a home elsewhere is hidden, the rest of the file
            # system is read-only; a dotfile kept in a plain folder of this home stays unwritable
            if under(real, ws) and real != ws and os.path.exists(real):
                out.append(Mount(real, _SHOW_RO))
            continue
        if not any(under(real, a) for a in allowed):
            out.append(Mount(real, _HIDE))
    return out


def _order(mounts: list[Mount]) -> list[Mount]:
    """By depth (a folder before what is inside it); at the same path writable, read-only, hidden; and
    without the mounts that change nothing (a hide inside what is hidden, a read-only show of
    what is already shown read-only)."""
    rank = {_SHOW_RW: 0, _SHOW_RO: 1, _HIDE: 2}
    unique = {(m.path, m.kind): m for m in mounts}.values()
    done: list[Mount] = []
    last: dict[str, str] = {}  # path -> kind of the last mount placed there
    for m in sorted(unique, key=lambda m: (_depth(m.path), m.path, rank[m.kind])):
        now = _SHOW_RO
        here = m.path
        while True:  # the deepest placed mount holding the path decides (placed by depth)
            if here in last:
                now = last[here]
                break
            if here == "/":
                break
            here = os.path.dirname(here)
        if m.kind == _HIDE and now == _HIDE or m.kind == _SHOW_RO and now == _SHOW_RO:
            continue
        done.append(m)
        last[m.path] = m.kind
    return done


def mount_plan(workspace: Path, euid: int | None = None) -> MountPlan:
    """The bwrap mounts that keep hidden what must stay hidden wherever ``workspace`` is, for
    bwrap started by ``euid`` (default this process's user)."""
    ws = os.path.realpath(workspace)
    check_workspace(ws, euid)
    _ensure_dsh_home(ws)
    homes = private_homes(euid)
    never = [dsh_home(), *_runtime_dirs()]
    allowed, refused = allow_list(never, euid)
    home_ws = ws in homes and ws != "/home"
    # shown again read-only: allowed paths outside the workspace, and in a home workspace those
    # inside its (hidden) dot entries
    allowed_paths = [a.path for a in allowed if not under(a.path, ws)
                     or home_ws and a.path != ws and os.path.relpath(a.path, ws).startswith(".")]
    cred_dirs, cred_files = credential_paths(euid)
    system = [f for f in SYSTEM_FILES if os.path.isfile(f)]
    for pattern in SYSTEM_GLOBS:
        system += sorted(glob.glob(pattern))
    hidden = ["/tmp", *homes, *never, *cred_dirs, *cred_files, *system]
    mounts = [Mount(os.path.realpath(p), _HIDE) for p in hidden if os.path.lexists(p)]
    mounts += [Mount(p, _SHOW_RO) for p in allowed_paths]
    if home_ws:
        mounts += _home_entries(ws, [a.path for a in allowed])
    else:
        mounts.append(Mount(ws, _SHOW_RW))
    readonly = []
    policy = os.environ.get("DSH_POLICY_FILE")
    if policy:
        real = os.path.realpath(os.path.expanduser(policy))
        if under(real, ws) and os.path.lexists(real):
            readonly.append(real)
            mounts.append(Mount(real, _SHOW_RO))
    # a hide inside the workspace or an allowed path is placed after it by depth; one at the
    # workspace's own path would hide the workspace: never (ws is refused inside $DSH_HOME)
    mounts = [m for m in mounts if not (m.kind == _HIDE and m.path in (ws, "/"))]
    return MountPlan(ws, _order(mounts), allowed, refused, homes, readonly, home_ws)
