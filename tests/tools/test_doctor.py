"""``python -m dsh_notebook doctor`` and ``%dsh doctor``: one line per protection, exit 0,
reflecting what this machine really has."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.tools.confine import bubblewrap
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]
NAMES = ("sandbox", "PID namespace", "file system", "network", "process cleanup", "environment",
         "redaction", "grep engine", "file tools", "session locking", "file modes")
# with bubblewrap, the probe sandbox's measurements (issue 21) come between
MEASURED = ("sandbox", "sandbox uid", "setuid files", "home", "capabilities", "mount, umount", "remount /", "PID namespace", "file system",
            "$DSH_HOME", "network", "process cleanup", *NAMES[5:])


def doctor(**env: str) -> subprocess.CompletedProcess[str]:
    return dsh("doctor", env={**os.environ, "PYTHONPATH": str(REPO), **env}, timeout=60)


def rows(out: str) -> dict[str, str]:
    return {name: line[len(name):].strip() for line in out.splitlines() for name in MEASURED
            if line.startswith(name + "  ")}


def test_doctor_prints_one_line_per_protection_and_exits_0() -> None:
    done = doctor()
    assert done.returncode == 0, done.stderr
    table = rows(done.stdout)
    bw = bubblewrap()
    names = MEASURED if bw is not None else NAMES
    assert list(table) == list(names) and len(done.stdout.splitlines()) == len(names)
    assert table["grep engine"].startswith("RE2 (google-re2 ")
    if bw is not None:
        assert table["sandbox"] == f"bubblewrap {bw.version} ({bw.path})" and table["PID namespace"].startswith("on")
        assert table["network"].startswith("on")
        assert table["capabilities"].startswith("none") and not any(v.startswith("MISSING") for v in table.values())
    else:
        assert table["sandbox"].startswith("none")


def test_doctor_reports_settings_and_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    done = doctor(DSH_SANDBOX_NETWORK="0", SOME_TOKEN="tok-0123456789", DSH_HOME=str(home), DSH_SANDBOX="1")
    table = rows(done.stdout)
    assert done.returncode == 0
    if bubblewrap() is not None:
        assert table["network"].startswith("off")
    assert f"{home} 0700" in table["file modes"]
    assert "tok-0123456789" not in done.stdout
    off = rows(doctor(DSH_SANDBOX="0").stdout)
    assert off["sandbox"] == "none: DSH_SANDBOX=0" and off["PID namespace"].startswith("off")
