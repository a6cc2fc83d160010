"""What the bash sandbox hides or keeps read-only, and in which order bwrap mounts it (issue 21).

bwrap applies its mount options **in order**, so a ``--bind WS WS`` placed after a hidden path
uncovers it when the workspace contains it (workspace = ``$HOME``: Jupyter started in ``~``,
``run --cwd ~``). The plan here therefore has three parts:

1. ``before`` the workspace bind: the hidden directories that *contain* the workspace
   (``/tmp`` for a workspace under ``/tmp``, ``~/.config`` for one under it), so the
   workspace stays visible inside them;
2. the workspace bind itself;
3. ``after`` it, everything else: when the workspace is ``$HOME`` the home's top level and
   every dot entry become read-only again (``--ro-bind``), its non-dot entries (but ``bin``,
   which ``~/.profile`` puts on ``PATH``) are bound writable one by one, and then the hidden
   directories (empty tmpfs) and hidden files (``/dev/null``) are mounted over whatever the
   workspace bind exposed.

Hidden: ``$DSH_HOME`` (session logs, ``mcp.json``, the search index), the credential stores of
``$HOME`` and ``/root`` (``.ssh .aws .gnupg .docker .kube .netrc .npmrc .git-credentials`` …),
``~/.config``, IPython's folder (``~/.ipython``, ``$IPYTHONDIR``), the Jupyter runtime folder
with the kernels' connection files, ``/tmp``, and ``/etc/shadow``-like files. Read-only when
inside the workspace: the dotfiles that run code outside the sandbox later (shell startup files,
``~/.local``, ``~/.jupyter``, ``~/.gitconfig``) and the rules file of ``$DSH_POLICY_FILE``.

Refused with ``ToolError(code="WORKSPACE_UNSAFE")``: a workspace that is ``$DSH_HOME`` or inside
it, and one that strictly contains a home (``/``, ``/home``): nothing could be kept hidden there.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ToolError

__all__ = ["CREDENTIAL_DIRS", "CREDENTIAL_FILES", "MountPlan", "dsh_home", "mount_plan"]

CREDENTIAL_DIRS = (".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure", ".claude", ".dsh",
                   ".config", ".ipython", ".password-store", ".local/share/jupyter/runtime",
                   ".local/share/keyrings", ".mozilla", ".pki", ".terraform.d", ".cargo/credentials")
CREDENTIAL_FILES = (".netrc", ".npmrc", ".pypirc", ".git-credentials", ".bash_history",
                    ".python_history", ".zsh_history", ".psql_history", ".mysql_history",
                    ".node_repl_history", ".pgpass", ".my.cnf", ".boto", ".s3cfg", ".Xauthority",
                    ".cargo/credentials.toml", ".cargo/credentials")
SYSTEM_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SYSTEM_GLOBS = ("/etc/ssh/ssh_host_*_key",)
# dotfiles that later run code outside the sandbox: read-only when the workspace holds them
RUNS_LATER = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
              ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".inputrc", ".gitconfig", ".local",
              ".jupyter", ".pythonrc", ".pythonrc.py", ".condarc", ".pam_environment", ".xprofile",
              ".xsessionrc", ".vimrc", ".emacs", ".emacs.d", ".tmux.conf", ".pip", "bin")
MAX_WRITABLE_ENTRIES = 500  # non-dot entries of a $HOME workspace bound writable one by one


@dataclass(frozen=True)
class MountPlan:
    """bwrap arguments around the workspace bind, and what they cover (for ``doctor``)."""

    before: list[str]
    after: list[str]
    hidden_dirs: list[str]
    hidden_files: list[str]
    readonly: list[str]
    home_workspace: bool


def dsh_home() -> str:
    return os.path.realpath(os.environ.get("DSH_HOME") or os.path.expanduser("~/.dsh"))


def _homes(euid: int | None = None) -> list[str]:
    """``$HOME`` and ``/root`` (the latter only where the user starting bwrap can enter it)."""
    homes = {os.path.realpath(os.path.expanduser("~"))}
    uid = os.geteuid() if euid is None else euid
    try:
        if uid == 0 or os.stat("/root").st_mode & 0o001:
            homes.add("/root")
    except OSError:
        pass
    return sorted(homes)


def _runtime_dirs(home: str) -> list[str]:
    """Jupyter's runtime folder (kernel connection files) and IPython's folder, as Jupyter finds them."""
    out = [os.environ.get("JUPYTER_RUNTIME_DIR", "")]
    data = os.environ.get("JUPYTER_DATA_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "jupyter")
    out += [os.path.join(data, "runtime"), os.environ.get("IPYTHONDIR", ""),
            os.environ.get("XDG_CONFIG_HOME", ""), os.environ.get("XDG_RUNTIME_DIR", "")]
    return [p for p in out if p]


def _under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it (both real, absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def check_workspace(ws: str) -> None:
    """Refuse workspaces where nothing could stay hidden (``WORKSPACE_UNSAFE``)."""
    home_of_dsh = dsh_home()
    if _under(ws, home_of_dsh):
        raise ToolError(
            f"the workspace {ws} is inside $DSH_HOME ({home_of_dsh}), which holds every session's log "
            "and the MCP configuration; the sandbox keeps it hidden and read-only, so bash cannot run "
            "here. Start in another folder (run --cwd DIR, or Jupyter in your project folder)",
            code="WORKSPACE_UNSAFE")
    for home in [*_homes(), "/"]:
        if home != ws and _under(home, ws) or ws == "/":
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
    if parent != path and _under(parent, ws):
        os.makedirs(path, mode=0o700, exist_ok=True)


def _hidden(ws: str, euid: int | None) -> tuple[list[str], list[str]]:
    dirs = ["/tmp", dsh_home()]
    files: list[str] = list(SYSTEM_FILES)
    for pattern in SYSTEM_GLOBS:
        files += sorted(glob.glob(pattern))
    for home in _homes(euid):
        dirs += [os.path.join(home, d) for d in CREDENTIAL_DIRS] + _runtime_dirs(home)
        files += [os.path.join(home, f) for f in CREDENTIAL_FILES]
    real_dirs: list[str] = []
    for raw in dirs:
        real = os.path.realpath(raw)
        if real != "/" and real not in real_dirs and os.path.isdir(real):
            real_dirs.append(real)
    real_files = sorted({os.path.realpath(f) for f in files if os.path.isfile(f)})
    return sorted(real_dirs, key=_depth), real_files


def _readonly(ws: str, home_ws: bool) -> list[str]:
    """Paths inside the workspace that must stay read-only (they run code outside later)."""
    out: list[str] = []
    policy = os.environ.get("DSH_POLICY_FILE")
    if policy:
        out.append(os.path.realpath(os.path.expanduser(policy)))
    if not home_ws:
        for home in _homes():
            out += [os.path.realpath(os.path.join(home, n)) for n in RUNS_LATER]
    return sorted({p for p in out if _under(p, ws) and os.path.lexists(p)}, key=_depth)


def mount_plan(workspace: Path, euid: int | None = None) -> MountPlan:
    """The bwrap mounts that keep hidden what must stay hidden wherever ``workspace`` is, for
    bwrap started by ``euid`` (default this process's user)."""
    ws = os.path.realpath(workspace)
    check_workspace(ws)
    _ensure_dsh_home(ws)
    dirs, files = _hidden(ws, euid)
    home_ws = ws in _homes()
    before: list[str] = []
    after: list[str] = []
    outer = [d for d in dirs if _under(ws, d)]  # hidden folders holding the workspace
    for d in outer:
        before += ["--tmpfs", d]
    inner = [d for d in dirs if d not in outer]
    if home_ws:  # the home's top level and dot entries read-only; its plain entries writable
        after += ["--ro-bind", ws, ws]
        names = sorted(n for n in os.listdir(ws) if not n.startswith(".") and n not in RUNS_LATER)
        for name in names[:MAX_WRITABLE_ENTRIES]:
            path = os.path.join(ws, name)
            if not os.path.islink(path):
                after += ["--bind", path, path]
    readonly = _readonly(ws, home_ws)
    for path in readonly:
        after += ["--ro-bind", path, path]
    shown: list[str] = []
    for d in inner:
        if any(_under(d, a) and not _under(d, ws) for a in outer) or any(_under(d, s) for s in shown):
            continue  # already under an empty tmpfs
        shown.append(d)
        after += ["--tmpfs", d]
    hidden_files: list[str] = []
    for f in files:
        if any(_under(f, d) for d in shown) or any(_under(f, a) and not _under(f, ws) for a in outer):
            continue
        hidden_files.append(f)
        after += ["--ro-bind", "/dev/null", f]
    return MountPlan(before, after, [*outer, *shown], hidden_files, readonly, home_ws)
