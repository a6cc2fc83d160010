"""Fixtures for the MCP tests (the notebook shell and loopback model server of tests/notebook)."""

from __future__ import annotations

from tests.notebook.conftest import fake_server, shell

__all__ = ["fake_server", "shell"]
