"""Fixtures for the notebook tests: a terminal-style IPython shell, the loopback model server,
and real kernels (``jupyter_client``). Every test has its own ``DSH_HOME`` (tests/conftest.py)."""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def shell(isolated_dsh_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """IPython's test shell (an ``InteractiveShell``, no kernel) with the extension loaded."""
    from IPython.testing.globalipapp import get_ipython

    from dsh_notebook.host.host import Host

    monkeypatch.chdir(tmp_path)
    left = Host.current()  # a host an earlier test of this worker left: it read that test's env (keys, home)
    if left is not None:
        left.shutdown()
    ip = get_ipython()
    ip.run_line_magic("load_ext", "dsh_notebook")
    yield ip
    ip.run_line_magic("unload_ext", "dsh_notebook")
    host = Host.current()
    if host is not None:
        host.shutdown()


def magics_of(ip: Any) -> Any:
    return ip.magics_manager.registry["DshMagics"]


def settled_log(ip: Any, session_id: str) -> str:
    """The session's log path once its agent is idle. A cell returns when the client sees
    ``turn/end``; the agent flushes it after that and goes idle only then (``Agent.wait_idle``)."""
    host = magics_of(ip).link.host
    live = host.registry.live[session_id]
    host.run(live.agent.wait_idle(), timeout=60)
    return str(live.log_path)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The loopback server; its key is DSH_API_KEY for this test (the host reads it at start)."""
    server = FakeOpenAIServer().start()
    assert server.api_key is not None
    monkeypatch.setenv("DSH_API_KEY", server.api_key)
    try:
        yield server
    finally:
        server.stop()


def fake_flags(server: FakeOpenAIServer, approve: str = "auto") -> str:
    return f"--model openai:fake-model --base-url {server.base_url} --approve {approve}"


def answer_stdin(monkeypatch: pytest.MonkeyPatch, *answers: str) -> list[str]:
    """The kernel's stdin (``input``, at the boundary) answers ``answers`` in order; the prompts it
    was asked are appended to the list returned."""
    asked: list[str] = []
    replies = iter(answers)

    def scripted_input(prompt: str = "") -> str:
        asked.append(prompt)
        return next(replies)

    monkeypatch.setattr(builtins, "input", scripted_input)
    return asked


@pytest.fixture
def kernel_env(isolated_dsh_home: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment a kernel inherits: the repo importable, the fake server's key as DSH_API_KEY."""
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{path}" if path else str(REPO))
    return dict(os.environ)


@pytest.fixture
def kernel(kernel_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A real ipykernel (``KernelManager``) with the extension loaded; yields (manager, client)."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=kernel_env)
    try:
        reply = kc.execute_interactive("%load_ext dsh_notebook", timeout=60)
        assert reply["content"]["status"] == "ok"
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
