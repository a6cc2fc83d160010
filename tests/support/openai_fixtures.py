"""Fixtures on the loopback OpenAI-compatible server, shared by the model and agent tests
(``tests/models/conftest.py`` re-exports them; other modules import them by name)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from tests.support.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A running loopback OpenAI-compatible server (one per test)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def adapter(fake_openai: FakeOpenAIServer) -> AsyncIterator[OpenAICompatAdapter]:
    """An ``OpenAICompatAdapter`` on the real ``openai`` SDK, talking to ``fake_openai``."""
    model = OpenAICompatAdapter("openai", fake_openai.base_url, fake_openai.api_key or "x", timeout=10)
    yield model
    await model.aclose()
