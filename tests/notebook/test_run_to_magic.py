"""``%dsh --run-to 'N cK'`` and the ``--bg`` handle's ``h.run_to()``: a one-shot pause at a stage of
a call; a passed target is RUN_TO_PASSED, a bad one BAD_RUN_TO before anything runs, one the turn
never reaches is said when the cell ends. Terminal IPython (no kernel), the scripted model."""

from __future__ import annotations

from typing import Any

import pytest

from dsh_notebook.notebook.cell.turn import CellTurn


def test_run_to_flag_and_handle(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell("%dsh --run-to '09 c1' read README.md and summarise")
    said = capsys.readouterr().out
    assert "[BAD_RUN_TO]" in said and "'09 c1': 09 is not a stage" in said and "paused" not in said
    h = shell.run_cell("%dsh --bg --no-widget --run-to '03 c1' read README.md and summarise").result
    assert isinstance(h, CellTurn)
    paused = h.wait_paused()
    assert (paused["stage"], paused["callId"], paused["name"]) == ("03", "c1", "read")
    with pytest.raises(Exception) as err:
        h.run_to("stage 2 of c1")
    assert getattr(err.value, "code", None) == "RUN_TO_PASSED"
    state = h.run_to("05 c1")
    assert state.run_to is not None and (state.run_to.stage, state.run_to.call) == ("05", "c1")
    paused = h.wait_paused()
    assert paused["stage"] == "05" and paused["payload"]["messages"][-1]["toolCallId"] == "c1"
    h.continue_()
    assert h.wait(timeout=120).ok
    capsys.readouterr()

    done = shell.run_cell("%dsh --run-to '02 c9' read README.md and summarise")  # never made: said at the end
    assert done.error_in_exec is None, done.error_in_exec
    out = capsys.readouterr().out
    assert "run to stage 02 of c9: not reached — the turn ended before stage 02 of c9 (1 tool call made)" in out
