"""Fixtures for the trajectory tests: the loopback OpenAI-compatible server and an adapter on it;
no catalog overrides leak in from the environment."""

from __future__ import annotations

import pytest

from tests.support.openai_fixtures import adapter, fake_openai

__all__ = ["adapter", "fake_openai"]


@pytest.fixture(autouse=True)
def _no_catalog_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DSH_PRICES_FILE", "DSH_CONTEXT_WINDOW"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
