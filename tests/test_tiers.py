"""Every test has exactly one tier (``unit``, ``integration``, ``e2e``, ``scale``; tests/support/tiers.py),
so ``-m unit`` and the other three split the suite with nothing left out and nothing run twice. A
test written later is caught here: two tier markers, or ``unit`` on a test that uses a kernel, a
browser or a subprocess. What the code analysis cannot see, the unit tier's guard sees as the test
runs; both are checked below on probes."""

from __future__ import annotations

import importlib
import socket
from collections.abc import Callable
from typing import Any

import pytest

from tests.support import tier_guard, tiers
from tests.support.tier_guard import GUARD, UnitGuard
from tests.support.tiers import TIER_TABLE, TIERS, infer


def test_every_collected_test_has_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    """Over every test this run collected, those ``-m`` deselected included; and on the markers
    themselves of what it runs (what ``-m`` selects by)."""
    table = request.config.stash[TIER_TABLE]
    assert request.node.nodeid in table
    problems = [f"{nodeid} {problem}" for nodeid, (_, _, problem) in table.items() if problem]
    assert problems == [], "tests without exactly one tier (see tests/support/tiers.py):\n" + "\n".join(problems)
    assert [nodeid for nodeid, (found, _, _) in table.items() if len(found) != 1 or found[0] not in TIERS] == []
    for item in request.session.items:
        assert len({m.name for m in item.iter_markers() if m.name in TIERS}) == 1, item.nodeid


# ---------- the rules, on probes ------------------------------------------------------------------

def _in_process() -> None:
    assert sorted({1: 2}) == [1]


def _runs_true() -> None:
    import subprocess

    subprocess.run(["true"], check=True)


def _runs_the_cli() -> None:
    from tests.support.cli import dsh

    assert dsh("--help").returncode == 0


def _opens_jupyterlab_in_chromium(page: Any) -> None:
    from playwright.sync_api import expect

    expect(page).to_have_title("JupyterLab")


# looked up by name: the tests below name no probe, so their own tier is not the probes'
PROBES: dict[str, Callable[..., None]] = {"in-process": _in_process, "subprocess": _runs_true,
                                          "cli": _runs_the_cli, "browser": _opens_jupyterlab_in_chromium}


def test_the_analysis_follows_helpers_and_imports_inside_functions() -> None:
    signals = {}
    for name, probe in PROBES.items():
        found = tiers.Reach()
        found.function(probe)
        signals[name] = sorted(found.signals)
    assert signals == {"in-process": [], "subprocess": ["process"], "cli": ["process"], "browser": ["e2e"]}


def _item(request: pytest.FixtureRequest, *markers: str) -> pytest.Function:
    """A fresh item of this module's ``test_markers_decide_before_the_code`` with ``markers``."""
    item = pytest.Function.from_parent(request.node.parent, name="test_markers_decide_before_the_code")
    for name in markers:
        item.add_marker(getattr(pytest.mark, name))
    return item


def test_markers_decide_before_the_code(request: pytest.FixtureRequest) -> None:
    assert infer(_item(request)) == ("unit", "in-process")
    assert infer(_item(request, "kernel")) == ("integration", "marker kernel")
    assert infer(_item(request, "slow")) == ("integration", "marker slow")
    assert infer(_item(request, "kernel", "browser")) == ("e2e", "marker browser")


def test_a_test_is_given_one_tier_and_two_or_a_wrong_unit_is_a_problem(request: pytest.FixtureRequest) -> None:
    plain = _item(request)
    assert tiers.classify(plain) == (["unit"], "in-process", None)
    assert tiers.explicit_tiers(plain) == ["unit"]  # the marker is on the item now
    _, _, problem = tiers.classify(_item(request, "integration", "scale"))
    assert problem == "has 2 tiers (integration, scale); a test has exactly one"
    _, _, problem = tiers.classify(_item(request, "unit", "kernel"))
    assert problem == "is marked unit but needs integration (marker kernel)"
    assert tiers.classify(_item(request, "scale", "kernel")) == (["scale"], "marked", None)


def test_the_guard_names_what_a_unit_test_started_and_connections_beyond_loopback(
        request: pytest.FixtureRequest) -> None:
    guard = UnitGuard()
    assert guard.failure(request.node.nodeid) is None
    guard.current = request.node
    guard.note("started a process: bash -c true")
    failure = guard.failure(request.node.nodeid)
    assert failure is not None and "bash -c true" in failure and "@pytest.mark.integration" in failure
    assert guard.failure(request.node.nodeid) is None  # reported once
    assert tier_guard._started(["bash", "-c", "true"]) == "started a process: bash -c true"
    # what a process starts once whichever test is first is no test's: the watchdog, uname -p
    assert tier_guard._started(["/venv/bin/python", "-S", "/repo/dsh_notebook/tools/watchdog.py"]) == ""
    assert tier_guard._started(["uname", "-p"]) == "" and tier_guard._started(["uname", "-a"])
    for address, beyond in ((("127.0.0.1", 80), False), (("::1", 80, 0, 0), False), (("localhost", 80), False),
                            (("10.1.2.3", 443), True), (("example.com", 443), True)):
        with socket.socket(socket.AF_INET6 if ":" in address[0] else socket.AF_INET) as sock:
            assert bool(guard._connecting(sock, address)) is beyond, address


def test_the_installed_guard_sees_a_process_this_unit_test_starts(request: pytest.FixtureRequest) -> None:
    """The guard of this run records a real process started where the analysis cannot see it (as
    the package's own processes are); the record, taken back here, is what fails a unit test."""
    if GUARD.current is not request.node:
        pytest.skip("the guard watches unit tests, and this run gave this test no tier")
    importlib.import_module("subprocess").run(["true"], check=True)
    failure = GUARD.failure(request.node.nodeid)  # taken: this test is not failed for it
    assert failure is not None and "started a process: true" in failure
