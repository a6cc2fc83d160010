"""Issue 21: ``doctor`` reports the sandbox as measured by a probe sandbox, and says plainly
when a protection is missing (it said "sandbox on" while root kept every capability)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsh_notebook.tools import confine
from dsh_notebook.tools.sandbox_probe import probe
from tests.hardening.conftest import needs_bwrap
from tests.support.cli import dsh

pytestmark = needs_bwrap
REPO = Path(__file__).resolve().parents[2]


def doctor_rows(cwd: Path) -> dict[str, str]:
    done = dsh("doctor", cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120, check=True)
    rows = {}
    for line in done.stdout.splitlines():
        name, _, state = line.partition("  ")
        rows[name.strip()] = state.strip()
    return rows


def test_doctor_measures_uid_capabilities_mounts_and_hidden_paths_in_a_home_workspace(fake_home: Path) -> None:
    rows = doctor_rows(fake_home)
    assert rows["capabilities"].startswith("none (CapEff 0"), rows
    assert rows["mount, umount"].startswith("refused"), rows
    assert rows["remount /"].startswith("read-only"), rows
    assert rows["$DSH_HOME"].startswith("hidden and not writable"), rows
    assert "each measured empty" in rows["file system"], rows
    assert rows["workspace"].startswith("this folder is a home"), rows
    inside = int(rows["sandbox uid"].split()[0])
    assert inside != 0 or os.geteuid() != 0 or not confine.bubblewrap().userns  # type: ignore[union-attr]
    assert not any(state.startswith("MISSING") for state in rows.values()), rows


def test_doctor_says_refused_where_bash_would_be_refused(fake_home: Path) -> None:
    rows = doctor_rows(fake_home / ".dsh")
    assert rows["workspace"].startswith("REFUSED here (WORKSPACE_UNSAFE)"), rows


@pytest.mark.integration
def test_the_probe_reports_what_is_missing_when_the_sandbox_keeps_capabilities(
    fake_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root keeps capabilities in bwrap")
    bw = confine.bubblewrap()
    assert bw is not None
    monkeypatch.setattr(confine, "identity_args", lambda bw, euid=None: [])  # last round's command line
    measured = probe(bw, fake_home / "proj")
    assert measured.capabilities and measured.mount and measured.umount and measured.uid == 0
    assert measured.remount and measured.home_writable  # umount + remount: the host's $DSH_HOME written
    assert not list((fake_home / ".dsh").glob(".dsh-probe-*"))  # and the probe removed what it wrote
