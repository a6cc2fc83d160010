"""One real session (the scripted model fixing the demo's tests through the CLI) shared by the tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return dsh(*argv, env=env, timeout=120)


@pytest.fixture(scope="module")
def fixed_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(DSH_HOME, log) of a turn that runs the failing tests (exit 1), reads, edits, reruns (exit 0)."""
    home = tmp_path_factory.mktemp("home")
    done = cli(home, "run", "--model", "script:auto", "--quiet", "run the tests")
    assert done.returncode == 0, done.stderr
    logs = sorted((home / "sessions").glob("*.jsonl"))
    assert len(logs) == 1
    return home, logs[0]
