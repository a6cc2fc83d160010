"""The host/client fixtures shared by ``tests/host`` and ``tests/client`` (their conftests
re-export them): the fake models, a host on a temp home, and a ``DshClient`` on it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.host.host import Host
from tests.host.support import Models, make_host


@pytest.fixture
def models() -> Models:
    return Models(pace=0.0)


@pytest.fixture
def host(tmp_path: Path, models: Models) -> Iterator[Host]:
    h = make_host(tmp_path / "home", models=models)
    yield h
    h.shutdown()


@pytest.fixture
def client(host: Host) -> Iterator[DshClient]:
    c = DshClient(host)
    yield c
    c.close()
