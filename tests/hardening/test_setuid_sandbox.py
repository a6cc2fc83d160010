"""Issue 35, finding 1: as root the sandbox's uid is host uid 0, and ``cp /usr/bin/python3 ./py &&
chmod 4755 ./py`` left a root-owned setuid binary in the workspace that any local user could run
to be root. Now a seccomp filter refuses setuid/setgid bits on any file the sandbox makes. Every
way a shell user would try — ``chmod``, ``install -m``, ``cp -p`` from a setuid binary, ``tar``
keeping modes, ``os.chmod``/``os.open``/``os.mknod``, the raw ``fchmodat2`` syscall, a file
capability — through the real ``bash`` tool as root and through bwrap started as a normal user;
the files stay the user's (owned, readable, writable, removable). Also the file tools: writing
to a setuid file clears the bits."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRegistry, ToolRuntime, builtin_tools, confine, seccomp
from tests.hardening.conftest import give_to, needs_bwrap, normal_user
from tests.hardening.homes import outside_tmp_home
from tests.tools.helpers import Frames, call

pytestmark = pytest.mark.integration  # every test here starts bwrap or a process as another user

SETUID_BIN = next((p for p in ("/usr/bin/passwd", "/usr/bin/su", "/bin/su", "/usr/bin/mount")
                   if os.path.exists(p) and os.stat(p).st_mode & stat.S_ISUID), None)
TAR_MAKER = ("import io, tarfile\n"
             "with tarfile.open('s.tar', 'w') as t:\n"
             "    data = open('/bin/true', 'rb').read()\n"
             "    info = tarfile.TarInfo('from-tar'); info.size = len(data); info.mode = 0o6755\n"
             "    t.addfile(info, io.BytesIO(data))\n")
ATTACKS = [
    "cp /usr/bin/python3 ./py && chmod 4755 ./py",
    "cp /bin/true ./u && chmod u+s ./u",
    "cp /bin/true ./g && chmod g+s ./g",
    "cp /bin/true ./ug && chmod 6755 ./ug",
    "install -m 4755 /bin/true ./inst",
    "install -m 2755 /bin/true ./inst-g",
    "cp --preserve=mode /bin/true ./pm && chmod --reference=/usr/bin/passwd ./pm",
    "python3 -c \"import shutil, os; shutil.copy('/bin/true', 'osch'); os.chmod('osch', 0o4755)\"",
    "python3 -c \"import os; os.close(os.open('osopen', os.O_CREAT | os.O_WRONLY, 0o4755))\"",
    "python3 -c \"import os; os.mknod('osmknod', 0o104755)\"",
    "python3 -c \"import os; fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o6755); "
    "os.link(f'/proc/self/fd/{fd}', 'tmpfile')\"",
    "python3 -c \"import ctypes, os; open('raw2', 'w').close(); "
    "ctypes.CDLL(None, use_errno=True).syscall(452, -100, b'raw2', 0o4755, 0)\"",
    "python3 -c \"import ctypes; open('rawfch', 'w').close(); import os; fd = os.open('rawfch', os.O_RDONLY); "
    "ctypes.CDLL(None, use_errno=True).syscall(91, fd, 0o4755)\"",
    f"python3 -c \"{TAR_MAKER}\" && tar -xpf s.tar",
    # a file capability (cap_setuid+ep): needs CAP_SETFCAP, which the sandbox has not got
    "cp /bin/true ./cap && python3 -c \"import os; os.setxattr('cap', 'security.capability', "
    "bytes.fromhex('0100000280000000000000000000000000000000'))\"",
]
if SETUID_BIN:
    ATTACKS += [f"cp -p {SETUID_BIN} ./cp-p", f"cp -a {SETUID_BIN} ./cp-a", f"rsync -p {SETUID_BIN} ./rs || true"]
SCRIPT = "\n".join(f"( {a} ) 2>/dev/null" for a in ATTACKS) + "\nls -ln; echo attacks-done"


def privileged(ws: Path) -> list[str]:
    """Regular files under ``ws`` with setuid, setgid or a file capability."""
    out = []
    for root, _dirs, files in os.walk(ws):
        for name in files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                out.append(f"{path} {oct(st.st_mode)}")
            try:
                os.getxattr(path, "security.capability", follow_symlinks=False)
                out.append(f"{path} has a file capability")
            except OSError:
                pass
    return out


def usable_by(ws: Path, uid: int) -> None:
    """The files the attack made are there, owned by ``uid`` (the user), and the user can
    read, overwrite and remove them."""
    made = [p for p in ws.iterdir() if p.is_file() and p.name != "s.tar"]
    assert len(made) >= 8, sorted(p.name for p in made)
    for path in made:
        assert path.stat().st_uid == uid, (path, path.stat().st_uid)
    py = ws / "py"
    assert py.read_bytes()[:4] == b"\x7fELF"
    py.write_bytes(b"overwritten")
    py.unlink()


@needs_bwrap
async def test_the_bash_tool_makes_no_setuid_file_and_leaves_the_files_the_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_SANDBOX", "1")
    ws = tmp_path / "ws"
    ws.mkdir()
    runtime = ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=Session("s_suid", cwd=str(ws)),
                          frames=Frames(), policy_mode="auto")
    out = await runtime.run(call("bash", {"command": SCRIPT}))
    assert "attacks-done" in out.text, out.text
    assert privileged(ws) == [], out.text
    usable_by(ws, os.geteuid())


@needs_bwrap
def test_a_normal_user_makes_no_setuid_file_either(monkeypatch: pytest.MonkeyPatch) -> None:
    user = normal_user()
    if user is None:
        pytest.skip("not root and no user 'dshprobe' to run bwrap as")
    with outside_tmp_home(monkeypatch) as home:
        ws = home / "proj"
        give_to(home, user)
        bw = confine.bubblewrap()
        assert bw is not None
        env = confine.allowed_env(home="/tmp")
        with seccomp.filter_fd() as fd:
            argv = confine.bwrap_argv(bw, ws, env, ["/bin/bash", "-c", SCRIPT], network=False, seccomp_fd=fd,
                                      euid=user.pw_uid)
            done = subprocess.run(["runuser", "-u", user.pw_name, "--", *argv], capture_output=True, text=True,
                                  env=env, timeout=120, check=False, pass_fds=() if fd is None else (fd,))
        assert "attacks-done" in done.stdout, done.stdout + done.stderr
        assert privileged(ws) == [], done.stdout
        usable_by(ws, user.pw_uid)
        assert pwd.getpwuid((ws / "u").stat().st_uid).pw_name == user.pw_name


@needs_bwrap
def test_the_filter_is_built_for_every_mode_setting_call() -> None:
    program = seccomp.program()
    assert program is not None, seccomp.unavailable_reason()
    assert len(program) % 8 == 0 and len(program) > 8 * len(seccomp.MODE_ARG)  # struct sock_filter[]


async def test_the_file_tools_clear_setuid_and_setgid_when_they_write(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("w.sh", "e.sh"):
        (ws / name).write_text("#!/bin/sh\necho old\n")
        os.chmod(ws / name, 0o6755)  # made before: by the user, or by last round's sandbox
    runtime = ToolRuntime(ToolRegistry(builtin_tools()), workspace=ws, session=Session("s_ft", cwd=str(ws)),
                          frames=Frames(), policy_mode="auto")
    out = await runtime.run(call("write", {"file_path": "w.sh", "content": "#!/bin/sh\necho new\n"}))
    assert out.code is None, out.text
    out = await runtime.run(call("edit", {"file_path": "e.sh", "old_string": "old", "new_string": "new"}, "c2"))
    assert out.code is None, out.text
    out = await runtime.run(call("write", {"file_path": "fresh.sh", "content": "x\n"}, "c3"))
    for name in ("w.sh", "e.sh"):
        mode = stat.S_IMODE((ws / name).stat().st_mode)
        assert mode == 0o755, (name, oct(mode))  # the bits go, the rest of the mode stays
        assert "new" in (ws / name).read_text()
    assert stat.S_IMODE((ws / "fresh.sh").stat().st_mode) & 0o6000 == 0
