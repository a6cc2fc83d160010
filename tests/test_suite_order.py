"""The parallel run's order (tests/conftest.py): the files named to start first exist, so a rename
cannot quietly put a long file back at the end of a run."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONG_FIRST

REPO = Path(__file__).resolve().parents[1]


def test_every_long_first_entry_names_an_existing_test_file_or_folder() -> None:
    missing = [p for p in LONG_FIRST if not (REPO / p).exists()]
    assert not missing, f"LONG_FIRST names what is not there: {missing}"
    assert all(p.startswith("tests/") for p in LONG_FIRST)
