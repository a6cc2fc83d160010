"""Shared fixtures for the tool tests: a real workspace, a real Session, a live-frame sink."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.session import Session
from dsh_notebook.tools import ToolRegistry, ToolRuntime, builtin_tools
from tests.tools.helpers import Frames


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def session(ws: Path) -> Session:
    return Session("s_tools", cwd=str(ws))


@pytest.fixture
def frames() -> Frames:
    return Frames()


@pytest.fixture
def make_runtime(ws: Path, session: Session, frames: Frames) -> Callable[..., ToolRuntime]:
    def make(tools: list[Any] | None = None, **kw: Any) -> ToolRuntime:
        registry = ToolRegistry(builtin_tools() if tools is None else tools)
        kw.setdefault("policy_mode", "auto")
        return ToolRuntime(registry, workspace=ws, session=session, frames=frames, **kw)

    return make
