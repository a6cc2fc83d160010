"""Fixtures for the hardening tests (issue 21): a fake ``$HOME`` full of secrets, a normal user.

The fake home lives in a fresh folder under ``/tmp`` (not pytest's 0700 ``tmp_path``) so that a
normal user can own and enter it; ``$DSH_HOME`` is inside it, as ``~/.dsh`` would be."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.tools import confine

TEST_USER = "dshprobe"
SECRETS = {
    ".ssh/id_rsa": "SECRET-SSH-KEY-1",
    ".aws/credentials": "SECRET-AWS-2",
    ".netrc": "SECRET-NETRC-3",
    ".npmrc": "SECRET-NPMRC-4",
    ".git-credentials": "SECRET-GITCRED-5",
    ".config/gh/hosts.yml": "SECRET-CONFIG-6",
    ".ipython/profile_default/history.sqlite": "SECRET-IPYHIST-7",
    ".local/share/jupyter/runtime/kernel-abc.json": "SECRET-KERNELKEY-8",
    ".dsh/sessions/s_other.jsonl": "SECRET-OTHERLOG-9",
    ".dsh/mcp.json": '{"servers": {}}',
}
needs_bwrap = pytest.mark.skipif(confine.bubblewrap() is None, reason="no usable bubblewrap here")


def normal_user() -> pwd.struct_passwd | None:
    """A non-root user to start bwrap as: ``dshprobe``, created with ``useradd`` when we are root."""
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        pass
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        return None
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER],
                   capture_output=True, check=False)
    try:
        return pwd.getpwnam(TEST_USER)
    except KeyError:
        return None


@pytest.fixture
def fake_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="dsh-fakehome-"))
    top.chmod(0o755)
    home = top / "home"
    for rel, text in SECRETS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    (home / ".bashrc").write_text("# user's bashrc\n")
    (home / "proj").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(home / ".dsh"))
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    yield home
    shutil.rmtree(top, ignore_errors=True)


def give_to(path: Path, user: pwd.struct_passwd) -> None:
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), user.pw_uid, user.pw_gid)
    os.chown(path, user.pw_uid, user.pw_gid)
