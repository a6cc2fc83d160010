"""Shared test set-up: every test gets its own DSH_HOME and no provider keys from the machine."""

from __future__ import annotations

from pathlib import Path

import pytest

_KEY_VARS = ("DSH_API_KEY", "DSH_MODEL", "DSH_BASE_URL", "DSH_TIMEOUT", "DEEPSEEK_API_KEY", "OPENAI_API_KEY",
             "DSH_MAX_STEPS", "DSH_MAX_TIME", "DSH_POLICY_FILE", "DSH_COMPACT_THRESHOLD", "DSH_CONTEXT_WINDOW")


@pytest.fixture(autouse=True)
def isolated_dsh_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("dsh_home")
    monkeypatch.setenv("DSH_HOME", str(home))
    for name in _KEY_VARS:
        monkeypatch.delenv(name, raising=False)
    return home
