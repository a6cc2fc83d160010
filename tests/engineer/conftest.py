"""One real session (the scripted model fixing the demo's tests through the CLI) shared by the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dsh_notebook", *argv], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


@pytest.fixture(scope="module")
def fixed_session(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(DSH_HOME, log) of a turn that runs the failing tests (exit 1), reads, edits, reruns (exit 0)."""
    home = tmp_path_factory.mktemp("home")
    done = cli(home, "run", "--model", "script:auto", "--quiet", "run the tests")
    assert done.returncode == 0, done.stderr
    logs = sorted((home / "sessions").glob("*.jsonl"))
    assert len(logs) == 1
    return home, logs[0]
