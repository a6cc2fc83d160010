"""Fixtures for the agent tests: the loopback OpenAI-compatible server and an adapter on it
(defined in ``tests/support/openai_fixtures.py``, shared with the model tests)."""

from __future__ import annotations

from tests.support.openai_fixtures import adapter, fake_openai

__all__ = ["adapter", "fake_openai"]
