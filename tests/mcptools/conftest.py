"""Fixtures for the MCP tests (the notebook shell, kernels and loopback model server of tests/notebook,
and a loopback model server per test for the host-level turns)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.notebook.conftest import fake_server, kernel_env, shell
from tests.support.fake_openai import FakeOpenAIServer

__all__ = ["fake", "fake_server", "kernel_env", "shell"]


@pytest.fixture
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server
