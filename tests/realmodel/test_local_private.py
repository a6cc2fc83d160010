"""Issue 35 finding 2 as attacks on the real ``local:smollm2`` server: a real second local user
(``dshprobe``, made with useradd) races for its address, asks it without the key and plays it; a
process of the same user asks it without the key; the key is looked for wherever another process
or a reader of the log could find it. Each test also runs against the old TCP server (the address
helper reads a port there) and fails on it: the racer took the port and heard the conversation,
the server answered without a key."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings, settings_from_env
from dsh_notebook.errors import ModelError
from dsh_notebook.launcher import new_host
from dsh_notebook.models.base import BlockEnd, Finish, ModelRequest
from dsh_notebook.models.routing import resolve_adapter
from dsh_notebook.wire.messages import TextBlock, user_text
from tests.hardening.conftest import normal_user

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")

# a raw HTTP request from another process: prints the status code, or "errno N" if it cannot connect
PROBE = r"""
import socket, sys
kind, target, method, path, key = sys.argv[1:6]
try:
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(60)
        sock.connect(target)
    else:
        sock = socket.create_connection(("127.0.0.1", int(target)), timeout=60)
    body = b'{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}' if method == "POST" else b""
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n" + (f"Authorization: Bearer {key}\r\n" if key != "-" else ""))
    sock.sendall(head.encode() + b"\r\n" + body)
    print(sock.recv(200).decode(errors="replace").split("\r\n")[0].split()[1])
except OSError as exc:
    print(f"errno {exc.errno}")
"""


@pytest.fixture
def other_user() -> pwd.struct_passwd:
    user = normal_user()
    if user is None or SYSTEM_PYTHON is None:
        pytest.skip("needs root (to add a second local user) and the system's python3")
    return user


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOCAL_THREADS", "1")


@pytest.fixture
def shared_tmp(other_user: pwd.struct_passwd, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``$TMPDIR``: a fresh folder every user can enter, as ``/tmp`` is meant to be, holding the
    server's private folder and the second user's files — so what refuses the second user is the
    server's own folder, whatever this machine's ``/tmp`` looks like."""
    parent = next((Path(p) for p in ("/var/tmp", "/tmp") if Path(p).is_dir() and Path(p).stat().st_mode & 0o001), None)
    if parent is None:
        pytest.skip("no temp folder other users can enter")
    base = Path(tempfile.mkdtemp(prefix="dsh-shared-", dir=parent))
    base.chmod(0o1777)
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read $TMPDIR again
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _address(server: Any) -> tuple[str, str]:
    """Where the server listens: its private socket (today), or the loopback port (before)."""
    channel = getattr(server, "channel", None)
    return ("unix", str(channel.socket_path)) if channel is not None else ("tcp", str(server.port))


def _probe(address: tuple[str, str], method: str, path: str, key: str = "-",
           user: pwd.struct_passwd | None = None) -> str:
    python = SYSTEM_PYTHON if user is not None else sys.executable
    assert python is not None
    extra: dict[str, Any] = {"user": user.pw_uid, "group": user.pw_gid, "env": {"PATH": "/usr/bin:/bin"}} if user else {}
    done = subprocess.run([python, "-c", PROBE, *address, method, path, key], capture_output=True, text=True,
                          cwd="/", timeout=120, **extra)
    return done.stdout.strip() or done.stderr.strip()


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _wait_for(what: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.05)
    return what()


@pytest.fixture
def racer(other_user: pwd.struct_passwd, shared_tmp: Path) -> Iterator[Path]:
    """The second user's racer (tests/realmodel/racer.py), watching before any server starts."""
    folder = Path(tempfile.mkdtemp(prefix="dsh-racer-", dir=shared_tmp))
    os.chown(folder, other_user.pw_uid, other_user.pw_gid)
    record = folder / "record.jsonl"
    script = folder / "racer.py"
    shutil.copy(HERE / "racer.py", script)
    assert SYSTEM_PYTHON is not None
    proc = subprocess.Popen([SYSTEM_PYTHON, str(script), str(record), str(os.getpid())], cwd="/",
                            user=other_user.pw_uid, group=other_user.pw_gid, env={"PATH": "/usr/bin:/bin"})
    try:
        assert _wait_for(lambda: any(r.get("ready") for r in _records(record)), 60), "the racer did not start"
        yield record
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


async def test_another_user_racing_for_the_address_never_takes_it_reaches_it_or_hears_the_conversation(
        racer: Path, shared_tmp: Path, threads: None) -> None:
    secret = f"the launch code is {uuid.uuid4().hex}"
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    try:
        request = ModelRequest(provider="local", model="smollm2", messages=[user_text(f"{secret}. Say hi.")],
                               config={"max_tokens": 8})
        chunks = [c async for c in model.stream(request)]
        worker = model.server.proc.pid  # type: ignore[attr-defined]
        tries = await asyncio.to_thread(
            _wait_for, lambda: [r for r in _records(racer) if "try" in r and r["pid"] == worker])
    finally:
        await model.aclose()
    records = _records(racer)
    assert any(r.get("saw") == worker for r in records), "the racer never saw the worker: nothing was tested"
    heard = [r["heard"] for r in records if "heard" in r]
    assert not heard, heard  # not a health check, not a word of the conversation
    assert {t["try"] for t in tries} >= {"bind-unix", "connect-unix", "list", "write"}, tries
    assert all(not t["ok"] and t["errno"] == 13 for t in tries), tries  # EACCES: the folder is not theirs
    assert all(Path(t["target"]).is_relative_to(shared_tmp) for t in tries)  # ...which sits where they can go
    assert isinstance(chunks[-1], Finish) and chunks[-1].reason in ("stop", "max-tokens")
    text = "".join(c.block.text for c in chunks if isinstance(c, BlockEnd) and isinstance(c.block, TextBlock))
    assert text != "pwned"


async def test_the_server_refuses_requests_without_its_key_and_another_user_cannot_connect(
        other_user: pwd.struct_passwd, shared_tmp: Path, threads: None) -> None:
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    try:
        assert await model.server_window() == 4096  # started: the product's own requests carry the key
        address = _address(model.server)  # type: ignore[attr-defined]
        assert address[0] == "tcp" or Path(address[1]).parent.parent == shared_tmp  # refused by its own folder
        ask = await asyncio.to_thread(
            lambda: {
                "chat": _probe(address, "POST", "/v1/chat/completions"),
                "props": _probe(address, "GET", "/props"),
                "slots": _probe(address, "GET", "/slots"),
                "wrong key": _probe(address, "POST", "/v1/chat/completions", key="sk-" + "0" * 40),
                "other user": _probe(address, "GET", "/props", user=other_user),
                "other user, health": _probe(address, "GET", "/health", user=other_user),
            })
        request = ModelRequest(provider="local", model="smollm2", messages=[user_text("Say hi.")],
                               config={"max_tokens": 4})
        assert isinstance([c async for c in model.stream(request)][-1], Finish)
        tcp = psutil.Process(model.server.proc.pid).net_connections(kind="inet")  # type: ignore[attr-defined]
    finally:
        await model.aclose()
    assert tcp == []  # no TCP port at all, listening or not
    # a process of the same user (another program, another notebook): HTTP 401 everywhere but /health
    assert (ask["chat"], ask["props"], ask["wrong key"]) == ("401", "401", "401"), ask
    assert ask["slots"] in ("401", "501"), ask  # 501: slots disabled, still nothing to read
    # another user: cannot even connect (no search permission on the folder)
    assert ask["other user"] == ask["other user, health"] == "errno 13", ask


def _every_process_text(kind: str) -> list[tuple[int, bytes]]:
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                out.append((int(pid), Path(f"/proc/{pid}/{kind}").read_bytes()))
            except OSError:
                pass
    return out


def test_the_key_is_on_no_command_line_in_no_environment_and_not_in_the_log(tmp_path: Path, threads: None) -> None:
    """A whole turn through the host (as the notebook and the CLI run one): while its server lives,
    the start's key is in no process's argv or environment, not in the session log, not in the
    server's own log; the request carried the model card's sampling."""
    from dsh_notebook.models import local_server

    host = new_host(Settings(home=tmp_path / "home"))
    client = DshClient(host)
    try:
        created = client.create_session(cwd=str(tmp_path), model="local:smollm2", approve="deny", max_tokens=8,
                                        tools="none")
        outcome = client.run("Say hi.", created.session_id, timeout=240)
        servers = local_server.live_servers()
        assert len(servers) == 1 and servers[0].channel is not None and servers[0].proc is not None
        channel, worker = servers[0].channel, servers[0].proc.pid
        key = channel.key.encode()
        cmdlines, environs = _every_process_text("cmdline"), _every_process_text("environ")
        assert any(pid == worker for pid, _ in cmdlines) and len(cmdlines) > 10
        server_log = channel.log_path.read_bytes()
        assert b"listening on unix://" in server_log  # the log read is the server's, on its socket
    finally:
        client.close()
        host.shutdown()
    assert outcome.log_path is not None
    log = Path(outcome.log_path).read_text()
    assert [pid for pid, text in cmdlines if key in text] == []
    assert [pid for pid, text in environs if key in text] == []
    assert key.decode() not in log and key not in server_log
    headers = [json.loads(line) for line in log.splitlines() if '"request/header"' in line]
    assert headers and headers[-1]["config"]["temperature"] == 0.2 and headers[-1]["config"]["top_p"] == 0.9
    assert not psutil.pid_exists(worker) or "local_worker" not in " ".join(psutil.Process(worker).cmdline())
    assert not channel.folder.exists()  # the socket's folder goes with the server


@pytest.fixture
def impostor(other_user: pwd.struct_passwd, shared_tmp: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """The second user's fake llama.cpp on a socket in a folder of its own: (process, socket, record)."""
    theirs = Path(tempfile.mkdtemp(prefix="dsh-impostor-", dir=shared_tmp))
    os.chown(theirs, other_user.pw_uid, other_user.pw_gid)
    record, sock = theirs / "record.jsonl", theirs / "fake.sock"
    shutil.copy(HERE / "racer.py", theirs / "racer.py")
    assert SYSTEM_PYTHON is not None
    proc = subprocess.Popen([SYSTEM_PYTHON, str(theirs / "racer.py"), str(record), "serve", str(sock)], cwd="/",
                            user=other_user.pw_uid, group=other_user.pw_gid, env={"PATH": "/usr/bin:/bin"})
    try:
        assert _wait_for(lambda: any(r.get("ready") for r in _records(record)), 60), "the impostor did not start"
        yield proc, sock, record
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(theirs, ignore_errors=True)


async def test_a_socket_swapped_for_another_users_server_is_refused_and_hears_nothing(
        impostor: tuple[subprocess.Popen[bytes], Path, Path], threads: None) -> None:
    """Only root or the user itself can put another socket in the folder; if one is there anyway,
    the product checks who answers (the peer's pid) before it sends a byte, and a new start works."""
    proc, sock, record = impostor
    model = resolve_adapter(settings_from_env(), "local:smollm2")
    request = ModelRequest(provider="local", model="smollm2", messages=[user_text("the conversation: say hi")],
                           config={"max_tokens": 4})
    try:
        assert isinstance([c async for c in model.stream(request)][-1], Finish)
        server = model.server  # type: ignore[attr-defined]
        first_folder = server.channel.folder
        os.replace(sock, server.channel.socket_path)  # what only root (or the user itself) could do
        await model.transport.aclose()  # type: ignore[attr-defined]  # no kept-alive connection: a new one
        with pytest.raises(ModelError) as refused:
            _ = [c async for c in model.stream(request)]
        assert refused.value.code == "LOCAL_SERVER_FAILED" and not refused.value.retryable
        assert f"served by process {proc.pid}" in refused.value.message
        assert isinstance([c async for c in model.stream(request)][-1], Finish)  # a new start, a new folder
        assert server.channel.folder != first_folder and not first_folder.exists()
    finally:
        await model.aclose()
    assert [r for r in _records(record) if "heard" in r] == []
