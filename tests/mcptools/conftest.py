"""Fixtures for the MCP tests (the notebook shell, kernels and loopback model server of tests/notebook)."""

from __future__ import annotations

from tests.notebook.conftest import fake_server, kernel_env, shell

__all__ = ["fake_server", "kernel_env", "shell"]
