"""Run ``python -m dsh_notebook ...`` in a real subprocess (this checkout, an isolated home)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, home: Path, extra_env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": FakeOpenAIServer.api_key or "",
           **(extra_env or {})}
    return dsh(*args, env=env, timeout=timeout)


def session_of(stdout: str) -> tuple[str, Path]:
    """The ``session: <id> log: <path>`` line of ``run``."""
    last = stdout.strip().splitlines()[-1].split()
    assert last[0] == "session:" and last[2] == "log:", stdout
    return last[1], Path(last[3])
