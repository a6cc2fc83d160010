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


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Parallel runs (``-n 2 --dist loadgroup``, the Makefile's ``test``): the tests of a file that
    share a module-scoped fixture (an executed notebook, a recorded run, a stdio host) go to one
    worker, so the fixture is built once, as in a serial run. A test may also name its own group
    with ``@pytest.mark.xdist_group("name")``."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d.scope == "module" for chain in defs for d in chain) and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
