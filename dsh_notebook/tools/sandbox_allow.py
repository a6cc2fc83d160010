"""What the bash sandbox may read inside the homes it hides: an allow-list (issue 35).

Outside the workspace, every home is hidden — ``$HOME``, ``/root``, ``/home`` (other users'
homes) and the home of every other login user — and only what the session needs comes back,
**read-only**:

- the Python interpreter of this process: ``sys.prefix``, ``sys.base_prefix`` and their
  ``exec_prefix`` twins (a venv, a pyenv or uv interpreter under ``$HOME``), and the pyenv root
  holding it (its shims and ``pyenv`` itself);
- its packages: every existing ``sys.path`` entry (``~/.local/lib/pythonX.Y/site-packages``, an
  editable install's source folder);
- the active environments: ``$VIRTUAL_ENV``, ``$CONDA_PREFIX``;
- what the user lists in ``DSH_SANDBOX_READ`` (paths separated by ``:``; ``~`` expands), e.g.
  ``DSH_SANDBOX_READ=~/.cargo:~/.rustup`` for a Rust toolchain.

A path the session finds on its own is kept only when it lies strictly inside a hidden home
(never a home itself, never a folder that holds one), outside ``$DSH_HOME`` and the Jupyter runtime
folder, and outside the known credential stores (:data:`CREDENTIAL_DIRS`); a ``DSH_SANDBOX_READ``
path may be any folder, but never ``$DSH_HOME`` nor inside a credential store. Inside every
allowed path the known credential files stay hidden (:data:`CREDENTIAL_FILES`): a second layer,
not the boundary.
"""

from __future__ import annotations

import os
import pwd
import sys
from dataclasses import dataclass

__all__ = ["CREDENTIAL_DIRS", "CREDENTIAL_FILES", "READ_VAR", "Allowed", "allow_list", "private_homes",
           "under"]

READ_VAR = "DSH_SANDBOX_READ"
# a second layer inside what is shown (the workspace, allowed paths): known credential stores
CREDENTIAL_DIRS = (".ssh", ".aws", ".gnupg", ".docker", ".kube", ".azure", ".claude", ".dsh",
                   ".config", ".ipython", ".password-store", ".local/share/jupyter/runtime",
                   ".local/share/keyrings", ".mozilla", ".pki", ".terraform.d", ".cargo/credentials",
                   ".cache/huggingface", ".kaggle", ".gcloud", ".oci", ".vault", ".helm",
                   ".local/share/python_keyring", ".pulumi", ".databrickscfg.d", ".sentinel")
CREDENTIAL_FILES = (".netrc", ".npmrc", ".pypirc", ".git-credentials", ".bash_history",
                    ".python_history", ".zsh_history", ".psql_history", ".mysql_history",
                    ".node_repl_history", ".pgpass", ".my.cnf", ".boto", ".s3cfg", ".Xauthority",
                    ".cargo/credentials.toml", ".cargo/credentials", ".vault-token", ".databrickscfg",
                    ".terraformrc", ".yarnrc", ".gem/credentials", ".sqlite_history", ".lesshst")
SYSTEM_HOMES = ("/", "/bin", "/sbin", "/usr", "/lib", "/lib64", "/etc", "/var", "/opt", "/srv",
                "/run", "/proc", "/sys", "/dev", "/tmp", "/boot", "/mnt", "/media", "/nonexistent")
MAX_OTHER_HOMES = 200


@dataclass(frozen=True)
class Allowed:
    """A real path shown read-only in the sandbox, and why (for ``doctor``)."""

    path: str
    why: str


def under(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it (both real, absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def reachable(path: str, euid: int | None = None) -> bool:
    """Whether user ``euid`` (default this process's) can enter every folder on the way to
    ``path`` and read it (owner or other bits; groups are not counted: a path reachable only
    through a group is treated as unreachable, so it is neither shown nor needs hiding)."""
    uid = os.geteuid() if euid is None else euid
    if uid == 0:
        return os.path.exists(path)
    if euid is None or uid == os.geteuid():
        return os.access(path, os.R_OK)
    parts = path.rstrip("/").split("/")
    for i in range(1, len(parts) + 1):
        here = "/".join(parts[:i]) or "/"
        try:
            st = os.stat(here)
        except OSError:
            return False
        bits = (st.st_mode >> 6) & 7 if st.st_uid == uid else st.st_mode & 7
        need = 4 if here == path.rstrip("/") or i == len(parts) else 1
        if not bits & need:
            return False
    return True


def _home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def private_homes(euid: int | None = None) -> list[str]:
    """The folders hidden as homes: ``$HOME``, ``/root`` (where the user starting bwrap can enter
    it), ``/home``, and the existing home of every other login user (uid 0 or >= 1000) that is
    not a system folder."""
    homes = set()
    home = _home()
    if home not in SYSTEM_HOMES and not under(home, "/usr") and os.path.isdir(home):
        homes.add(home)  # HOME=/ or /var (service accounts): never hide the system
    if reachable("/root", euid):
        homes.add("/root")
    if os.path.isdir("/home"):
        homes.add("/home")
    others = 0
    try:
        users = pwd.getpwall()
    except OSError:
        users = []
    for user in users:
        if others >= MAX_OTHER_HOMES:
            break
        if not (user.pw_uid == 0 or 1000 <= user.pw_uid < 65534) or not user.pw_dir.startswith("/"):
            continue
        real = os.path.realpath(user.pw_dir)
        if real in SYSTEM_HOMES or under(real, "/usr") or under(real, "/home") or not os.path.isdir(real):
            continue
        if not reachable(real, euid):
            continue  # unreadable for the user starting bwrap: nothing to hide
        if real not in homes:
            homes.add(real)
            others += 1
    return sorted(homes)


def _user_homes(euid: int | None) -> list[str]:
    """The real homes the credential-store names are relative to (``/home`` itself is not one)."""
    out = [h for h in private_homes(euid) if h != "/home"]
    try:
        out += [os.path.join("/home", n) for n in os.listdir("/home")]
    except OSError:
        pass
    return sorted({os.path.realpath(h) for h in out})


def _pyenv_root(prefix: str) -> str | None:
    env = os.environ.get("PYENV_ROOT")
    if env and under(prefix, os.path.realpath(env)):
        return os.path.realpath(env)
    parent, leaf = os.path.split(os.path.dirname(prefix))
    if leaf == "versions" and os.path.exists(os.path.join(parent, "libexec", "pyenv")):
        return parent
    return None


def _found() -> list[Allowed]:
    """What the interpreter of this process needs, as it finds it."""
    out: list[Allowed] = []
    for attr in ("prefix", "base_prefix", "exec_prefix", "base_exec_prefix"):
        value = getattr(sys, attr, "")
        if value:
            real = os.path.realpath(value)
            out.append(Allowed(real, "interpreter"))
            root = _pyenv_root(real)
            if root:
                out.append(Allowed(root, "pyenv root"))
    out += [Allowed(os.path.realpath(p), "sys.path") for p in sys.path if p and os.path.exists(p)]
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = os.environ.get(var)
        if value and os.path.isabs(value) and os.path.isdir(value):
            out.append(Allowed(os.path.realpath(value), f"${var}"))
    return out


def _requested() -> list[Allowed]:
    raw = os.environ.get(READ_VAR, "")
    out = []
    for item in raw.split(os.pathsep):
        item = item.strip()
        if not item:
            continue
        path = os.path.expanduser(item)
        if os.path.isabs(path) and os.path.exists(path):
            out.append(Allowed(os.path.realpath(path), READ_VAR))
    return out


def credential_paths(euid: int | None = None) -> tuple[list[str], list[str]]:
    """(credential-store folders, credential files) of every home, as real paths that exist."""
    dirs: list[str] = []
    files: list[str] = []
    for home in _user_homes(euid):
        for rel in CREDENTIAL_DIRS:
            path = os.path.join(home, rel)
            if os.path.isdir(path):
                dirs.append(os.path.realpath(path))
        for rel in CREDENTIAL_FILES:
            path = os.path.join(home, rel)
            if os.path.isfile(path):
                files.append(os.path.realpath(path))
    return sorted(set(dirs)), sorted(set(files))


def allow_list(never: list[str], euid: int | None = None) -> tuple[list[Allowed], list[Allowed]]:
    """(allowed, refused) real paths: refused ones lie inside a path in ``never`` ($DSH_HOME, the
    runtime folders) or a credential store, or — for a path found automatically — are a home or
    hold one, or lie outside every home."""
    homes = private_homes(euid)
    cred_dirs, _ = credential_paths(euid)
    blocked = [*never, *cred_dirs]
    allowed: list[Allowed] = []
    refused: list[Allowed] = []
    seen: set[str] = set()
    for item in [*_requested(), *_found()]:
        if item.path in seen:
            continue
        seen.add(item.path)
        if not reachable(item.path, euid):
            continue  # bwrap, started by that user, could not bind it anyway
        if any(under(item.path, b) for b in blocked):
            refused.append(item)
        elif item.why == READ_VAR:
            allowed.append(item)
        elif any(under(h, item.path) for h in homes) or item.path == "/":
            refused.append(item)  # a home, or a folder holding one: never shown whole
        elif any(under(item.path, h) for h in homes):
            allowed.append(item)
    outer = [a for a in allowed if not any(b.path != a.path and under(a.path, b.path) for b in allowed)]
    return outer, refused
