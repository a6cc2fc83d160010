"""``%dsh doctor`` and the ``DshMagics.sandbox_network`` traitlet in terminal IPython."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_notebook.notebook.magic.views import ConfigView
from dsh_notebook.tools import confine


@pytest.mark.integration
def test_magic_doctor_lists_the_protections(shell: Any) -> None:
    view = shell.run_cell("%dsh doctor").result
    assert isinstance(view, ConfigView)
    rows = list(view.items)
    assert rows[0] == "sandbox" and {"PID namespace", "file system", "network"} <= set(rows)
    assert rows.index("PID namespace") < rows.index("file system") < rows.index("network")
    assert view.items["grep engine"].startswith("RE2") and "<table" in view._repr_html_()


@pytest.mark.integration
def test_sandbox_network_traitlet_turns_the_network_off(shell: Any) -> None:
    try:
        shell.run_line_magic("config", "DshMagics.sandbox_network = False")
        assert confine.network_enabled() is False
        if confine.bubblewrap() is not None:
            assert shell.run_cell("%dsh doctor").result.items["network"].startswith("off")
    finally:
        shell.run_line_magic("config", "DshMagics.sandbox_network = None")
    assert confine.network_enabled() is True
