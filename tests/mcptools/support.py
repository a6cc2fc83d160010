"""Helpers for the MCP tests: mcp.json on a temp home, a host on it, the servers' processes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings
from dsh_notebook.host.host import Host
from dsh_notebook.launcher import new_host
from tests.support.fake_openai import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
SDK_SERVER = HERE / "sdk_server.py"
NODE_BIN = HERE / "node_modules" / ".bin"


def write_config(home: Path, servers: dict[str, Any]) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def sdk_stdio(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SDK_SERVER)], **extra}


def make_host(home: Path, **settings: Any) -> Host:
    return new_host(Settings(home=home, api_key=FakeOpenAIServer.api_key, **settings))


def events(log_path: str) -> list[dict[str, Any]]:
    lines = Path(log_path).read_text().splitlines()
    return [json.loads(line) for line in lines[1:] if line.strip()]


def of_type(evs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in evs if e["type"] == kind]


def server_processes(marker: str) -> list[psutil.Process]:
    """Live processes (children of this one) whose command line mentions ``marker``."""
    out = []
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and any(marker in part for part in proc.cmdline()):
                out.append(proc)
        except psutil.NoSuchProcess:
            continue
    return out


def wait_gone(marker: str, timeout: float = 10.0) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = server_processes(marker)
        if not left:
            return []
        time.sleep(0.05)
    return server_processes(marker)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(port: int, *, sleeping: Path | None = None) -> subprocess.Popen[bytes]:
    """The SDK test server over streamable HTTP on ``127.0.0.1:port/mcp`` (its own process);
    its ``sleep`` tool writes ``sleeping`` when a call reaches it."""
    env = {**os.environ, "SDK_SERVER_SLEEPING": str(sleeping)} if sleeping is not None else None
    proc = subprocess.Popen([sys.executable, str(SDK_SERVER), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return proc


@contextmanager
def http_server() -> Iterator[str]:
    port = free_port()
    proc = start_http_server(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def node_server(name: str) -> str | None:
    """The installed npm reference server's executable (``make setup`` installs them)."""
    path = NODE_BIN / name
    return str(path) if path.exists() and shutil.which("node") else None


def run_turn(host: Host, fake: FakeOpenAIServer, ws: Path, *, approve: str = "auto", session: str | None = None) -> Any:
    """One blocking turn of ``host`` on the loopback model server, its tools allowed by ``approve``."""
    with DshClient(host) as client:
        return client.run("use the tool", session, model="fake-model", base_url=fake.base_url, cwd=str(ws),
                          approve=approve, timeout=90)


def one_turn(home: Path, fake: FakeOpenAIServer, ws: Path, *, approve: str = "auto") -> Any:
    """A host on ``home`` for one :func:`run_turn`, shut down after it; the turn's outcome."""
    host = make_host(home)
    try:
        return run_turn(host, fake, ws, approve=approve)
    finally:
        host.shutdown()


def last_tool_message(request: Any) -> dict[str, Any]:
    return [m for m in request.messages if m["role"] == "tool"][-1]
