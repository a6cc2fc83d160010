"""Fixtures for the agent kernel: the kernelspec ``dsh`` installed into a temporary prefix by the
real CLI (``python -m dsh_notebook install-kernel --prefix P``) and found through ``JUPYTER_PATH``;
kernels started by ``jupyter_client`` from that spec import this checkout (``PYTHONPATH``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def dsh_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("prefix")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    done = dsh("install-kernel", "--prefix", str(prefix), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "installed kernelspec 'dsh' (Agent (dsh))" in done.stdout
    return prefix


@pytest.fixture
def agent_env(dsh_prefix: Path, isolated_dsh_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process finds the spec (``JUPYTER_PATH``); kernels import the checkout."""
    monkeypatch.setenv("JUPYTER_PATH", str(dsh_prefix / "share" / "jupyter"))
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{path}" if path else str(REPO))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return dict(os.environ)


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer().start()
    assert server.api_key is not None
    monkeypatch.setenv("DSH_API_KEY", server.api_key)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_env(agent_env: dict[str, str], fake_server: FakeOpenAIServer) -> dict[str, str]:
    """A kernel whose sessions talk to the loopback server (``DSH_BASE_URL``, ``DSH_MODEL``)."""
    return {**agent_env, "DSH_API_KEY": str(fake_server.api_key), "DSH_BASE_URL": fake_server.base_url,
            "DSH_MODEL": "openai:fake-model"}


def start_agent_kernel(env: dict[str, str], cwd: Path) -> tuple[Any, Any]:
    from jupyter_client.manager import start_new_kernel

    return start_new_kernel(kernel_name="dsh", cwd=str(cwd), env=env)


@pytest.fixture
def agent_kernel(fake_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A running ``dsh`` kernel (``KernelManager``, client) on the loopback model."""
    km, kc = start_agent_kernel(fake_env, tmp_path)
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
