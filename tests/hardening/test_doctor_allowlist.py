"""Issue 35, design 1: ``doctor`` measures the uid commands run as (and the host uid it maps to),
whether a setuid file can be made, and whether anything in the homes outside the allow-list is
readable — by a probe sandbox, so a missing protection shows as ``MISSING``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook import doctor
from dsh_notebook.tools import confine, sandbox_mounts, seccomp
from dsh_notebook.tools.sandbox_probe import probe
from tests.hardening.conftest import needs_bwrap
from tests.hardening.homes import leaked, make_venv, outside_tmp_home, plant
from tests.hardening.test_doctor_measured import doctor_rows

pytestmark = needs_bwrap


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with outside_tmp_home(monkeypatch) as fake_home:
        plant(fake_home)
        venv = make_venv(fake_home)
        (fake_home / ".cargo" / "bin").mkdir(parents=True)
        monkeypatch.setenv("VIRTUAL_ENV", str(venv))
        monkeypatch.setenv("PATH", f"{fake_home / '.cargo' / 'bin'}{os.pathsep}{os.environ['PATH']}")
        yield fake_home


def test_doctor_reports_uid_setuid_and_the_hidden_home_as_measured(home: Path) -> None:
    rows = doctor_rows(home / "proj")
    inside, _, rest = rows["sandbox uid"].partition(" inside = uid ")
    host = rest.split()[0]
    if os.geteuid() == 0:
        assert host == "0" and inside != "0", rows["sandbox uid"]  # said plainly: root's uid outside
    assert rows["setuid files"].startswith("refused: chmod 4755, chmod g+s and install -m 4755 in the workspace"), rows
    assert rows["home"].startswith("hidden: "), rows["home"]
    probed = int(rows["home"].split(" — ", 1)[1].split()[0])
    assert probed >= 25, rows["home"]  # the planted entries, one by one
    assert f"{home / '.venvs' / 'tool'} ($VIRTUAL_ENV)" in rows["home"]
    assert f"PATH folders hidden inside (add them to DSH_SANDBOX_READ to use them): {home / '.cargo' / 'bin'}" in rows["home"]
    assert leaked(" ".join(rows.values())) == []
    assert not any(state.startswith("MISSING") for state in rows.values()), rows


def test_doctor_says_so_in_a_home_workspace(home: Path) -> None:
    rows = doctor_rows(home)
    assert rows["workspace"].startswith("this folder is a home: its top level read-only"), rows
    assert "this home's dot entries" in rows["home"] and "none readable" in rows["home"], rows["home"]
    assert rows["setuid files"].startswith("refused"), rows


def test_the_probe_reports_setuid_files_when_the_filter_is_missing(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    @contextlib.contextmanager
    def no_filter() -> Iterator[None]:  # libseccomp missing, as on a machine without it
        yield None

    monkeypatch.setattr(seccomp, "filter_fd", no_filter)
    bw = confine.bubblewrap()
    assert bw is not None
    measured = probe(bw, home / "proj")
    assert measured.setuid and measured.setuid_where == str(home / "proj")
    assert doctor._setuid_row(measured).startswith("MISSING: a setuid/setgid file was made in the workspace")
    assert not list((home / "proj").glob(".dsh-probe-suid-*"))  # and the probe removed what it made


def test_the_probe_reports_a_readable_home_when_the_mounts_do_not_hide_it(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan_args = sandbox_mounts.MountPlan.args

    def without_home_hiding(self: sandbox_mounts.MountPlan) -> list[str]:  # last round's deny-list only
        kept = [m for m in self.mounts if not (m.kind == "hide" and m.path in self.homes)]
        return [a for m in kept for a in m.args()]

    monkeypatch.setattr(sandbox_mounts.MountPlan, "args", property(without_home_hiding))
    bw = confine.bubblewrap()
    assert bw is not None
    measured = probe(bw, home / "proj")
    row = doctor._home_row(measured)
    assert row.startswith("MISSING: readable outside the allow-list: "), row
    assert str(home / ".kaggle") in measured.readable and str(home / ".vault-token") in measured.readable
    monkeypatch.setattr(sandbox_mounts.MountPlan, "args", plan_args)
    assert doctor._home_row(probe(bw, home / "proj")).startswith("hidden: ")
