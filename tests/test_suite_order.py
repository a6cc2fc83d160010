"""The parallel run's order (tests/conftest.py): the files named to start first exist, so a rename
cannot quietly put a long file back at the end of a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LONG_FIRST

REPO = Path(__file__).resolve().parents[1]


def test_every_long_first_entry_names_an_existing_test_file_or_folder() -> None:
    missing = [p for p in LONG_FIRST if not (REPO / p).exists()]
    assert not missing, f"LONG_FIRST names what is not there: {missing}"
    assert all(p.startswith("tests/") for p in LONG_FIRST)


@pytest.fixture(scope="module")
def built_once() -> int:
    return 1


def test_a_module_fixture_puts_its_files_tests_in_one_xdist_group(request: pytest.FixtureRequest, built_once: int) -> None:
    """Under ``-n N --dist loadgroup`` (``make test``) a test with a module-scoped fixture carries its
    file's group in its node id: without it xdist spreads the file over the workers and each builds
    the fixture again (pytest 9.2 with xdist 3.8 did: the seven walkthrough notebooks ran twice)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only a worker of --dist loadgroup groups tests")
    assert request.node.nodeid.endswith("@tests/test_suite_order.py"), request.node.nodeid
