"""Fixtures for the client tests: the host tests' ``models``, ``host`` and ``client``."""

from __future__ import annotations

from tests.host.fixtures import client, host, models

__all__ = ["client", "host", "models"]
