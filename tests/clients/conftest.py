"""Real Jupyter clients driven from outside: ``jupyter console`` in a pseudo-terminal (pexpect),
``jupyter nbconvert --execute`` and papermill on saved notebooks. Kernels import this checkout
(``PYTHONPATH``); the agent kernel ``dsh`` is installed into a temporary prefix by the real CLI and
found through ``JUPYTER_PATH``. Every prompt runs on the embedded scripted model (offline)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def dsh_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    prefix = tmp_path_factory.mktemp("prefix")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = dsh("install-kernel", "--prefix", str(prefix), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return prefix


@pytest.fixture
def client_env(dsh_prefix: Path, isolated_dsh_home: Path, tmp_path: Path) -> dict[str, str]:
    """What a client process and the kernels it starts get: this checkout, the dsh kernelspec, a
    scratch ``DSH_HOME``, no notebook name, a plain terminal."""
    env = {k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME", "DSH_MODEL")}
    path = os.environ.get("PYTHONPATH")
    env.update({
        "PYTHONPATH": f"{REPO}{os.pathsep}{path}" if path else str(REPO),
        "JUPYTER_PATH": str(dsh_prefix / "share" / "jupyter"),
        "DSH_HOME": str(isolated_dsh_home),
        "TERM": "dumb",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    })
    return env
