"""Shared test set-up: every test gets its own DSH_HOME and no provider keys from the machine, and
exactly one tier (``unit``, ``integration``, ``e2e``, ``scale``; tests/support/tiers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.providers import key_variables
from tests.support.tier_guard import GUARD
from tests.support.tiers import TIER_TABLE, classify

# what no test inherits from the machine: dsh's own settings and every provider's key variable (the
# provider table's, so a new row's key is scrubbed too: tests/models/test_provider_table.py checks it)
SCRUBBED = ("DSH_API_KEY", "DSH_MODEL", "DSH_BASE_URL", "DSH_TIMEOUT", *key_variables(),
            "DSH_MAX_STEPS", "DSH_MAX_TIME", "DSH_POLICY_FILE", "DSH_COMPACT_THRESHOLD", "DSH_CONTEXT_WINDOW")


def pytest_configure(config: pytest.Config) -> None:
    """The embedded scripted model streams without its classroom pace in every process a test
    starts (kernels, the CLI, JupyterLab, module fixtures): its runs take a third of the time. A
    test that watches a stream arrive sets its own ``DSH_SCRIPT_PACE``. Likewise a failed model
    request is retried at once (``DSH_RETRY_DELAY``: the product's 0.5 + 1 + 2 s backoff is its own
    clock, which no test needs to wait for); a test of the backoff sets its own. The unit tier's
    guard is installed (tests/support/tiers.py)."""
    os.environ["DSH_SCRIPT_PACE"] = "0"
    os.environ["DSH_RETRY_DELAY"] = "0"
    GUARD.install()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--show-tiers", action="store_true",
                     help="print each collected test's tier and why (tests/support/tiers.py)")


@pytest.fixture(autouse=True)
def isolated_dsh_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("dsh_home")
    monkeypatch.setenv("DSH_HOME", str(home))
    scrub(monkeypatch)
    return home


def scrub(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every :data:`SCRUBBED` variable for the test (``monkeypatch`` puts them back)."""
    for name in SCRUBBED:
        monkeypatch.delenv(name, raising=False)


# The files whose tests (or whose one group) take longest, measured with ``--durations`` (a group
# of seven executed notebooks; the real model's runs; JupyterLab pages that wait for the widget's
# stage pacing). A parallel run starts them first, so that the last minutes of a run are short
# tests shared by both workers, not one long file on one worker while the other idles. Whole
# files move, each keeping its own order.
LONG_FIRST = (
    "tests/walkthrough/test_notebooks.py", "tests/realmodel/", "tests/clients/test_executed.py",
    "tests/browser/test_stage_follow_e2e.py", "tests/browser/test_present_e2e.py",
    "tests/browser/test_walkthrough_e2e.py", "tests/browser/test_narrow_e2e.py",
)  # fmt: skip


def _long_first(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return next((i for i, prefix in enumerate(LONG_FIRST) if path.startswith(prefix)), len(LONG_FIRST))


def pytest_itemcollected(item: pytest.Item) -> None:
    """Parallel runs (``-n 3 --dist loadgroup``, the Makefile's ``test``): the tests of a file that
    share a module-scoped fixture (an executed notebook, a recorded run, a stdio host) go to one
    worker, so the fixture is built once, as in a serial run. A test may also name its own group
    with ``@pytest.mark.xdist_group("name")``. Marked as each item is collected, before any
    ``pytest_collection_modifyitems`` (where xdist turns the marks into node-id suffixes)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    if any(d.scope == "module" for chain in defs for d in chain) and not item.get_closest_marker("xdist_group"):
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test gets its tier before ``-m`` selects (this runs after the folders' own hooks, which
    may add markers such as ``realmodel``, and before pytest's deselection); the table of every
    collected test's tiers is kept for tests/test_tiers.py. The files of ``LONG_FIRST`` run first on a
    worker of ``-n N``: the order the scheduler hands out."""
    table = config.stash.setdefault(TIER_TABLE, {})
    for item in items:
        table[item.nodeid] = classify(item)
    if config.getoption("--show-tiers"):
        for nodeid, (tiers, why, problem) in table.items():
            print(f"{'/'.join(tiers):12} {nodeid}  ({problem or why})")
    if hasattr(config, "workerinput"):
        items.sort(key=_long_first)  # stable: every other file keeps its place and its order


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A ``unit`` test is watched from its set-up to its teardown (tests/support/tiers.py)."""
    GUARD.current = item if item.get_closest_marker("unit") else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    if call.when == "teardown":
        GUARD.current = None
        problem = GUARD.failure(item.nodeid)
        if problem is not None and report.passed:
            report.outcome = "failed"
            report.longrepr = problem
    return report

