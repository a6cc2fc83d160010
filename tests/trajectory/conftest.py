"""Fixtures for the trajectory tests: the loopback OpenAI-compatible server and an adapter on it."""

from __future__ import annotations

from tests.support.openai_fixtures import adapter, fake_openai

__all__ = ["adapter", "fake_openai"]
