"""Fixtures for the host tests (shared with ``tests/client``; defined in ``fixtures.py``)."""

from __future__ import annotations

from tests.host.fixtures import client, host, models

__all__ = ["client", "host", "models"]
