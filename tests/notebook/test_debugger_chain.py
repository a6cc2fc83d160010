"""The debugger's Python API is safe to chain (issue 22): ``h.edit(…); h.step(); h.continue_()`` in
one cell each wait for the pause they need, and no pause or breakpoint of that run leaks into the
next ``%dsh --break``. Terminal IPython (no kernel), the scripted model, real tools."""

from __future__ import annotations

import re
from typing import Any

import pytest

from dsh_notebook.notebook.cell.result import TurnResult
from dsh_notebook.notebook.cell.turn import CellTurn
from dsh_notebook.wire.events import DebugEdit, ToolResult

MARK = "MARKER-22 the file says hello"


def test_edit_step_continue_in_one_cell_then_a_new_break_run_pauses_only_where_asked(
        shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    h = shell.run_cell("h = %dsh --bg --no-widget --break 04 read README.md and summarise\nh").result
    assert isinstance(h, CellTurn)
    paused = shell.run_cell("h.wait_paused()").result
    assert paused["stage"] == "04" and paused["name"] == "read"
    chained = shell.run_cell(f"h.edit('result', {MARK!r}); s = h.step(); c = h.continue_(); (s, c)")
    assert chained.error_in_exec is None, chained.error_in_exec
    result = h.wait(timeout=120)
    assert result.ok, result.summary()
    edits = [e for e in result.events if isinstance(e, DebugEdit)]
    assert [(e.stage, e.after) for e in edits] == [("04", MARK)]
    [tool] = [e for e in result.events if isinstance(e, ToolResult)]
    assert tool.message.text == MARK  # the model saw the edited result
    again = shell.run_cell("h.continue_()").error_in_exec  # after the end: a clear coded line
    assert again is not None and again.code == "NOT_PAUSED" and "the turn ended (completed)" in again.message
    capsys.readouterr()

    nxt = shell.run_cell("%dsh --break 03,06 read README.md and summarise")  # no stdin: noticed, continued
    assert nxt.error_in_exec is None, nxt.error_in_exec
    assert isinstance(nxt.result, TurnResult) and nxt.result.ok
    out = capsys.readouterr().out
    stages = re.findall(r"paused at stage (\d\d)", out)
    assert stages and set(stages) == {"03", "06"}, out  # never 05 (the step of the run before)


def test_print_of_a_cancelled_handle_says_how_it_ended(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    h = shell.run_cell("%dsh --bg --no-widget --break 03 read README.md and summarise").result
    h.wait_paused()
    h.cancel()
    result = h.wait(timeout=120)
    capsys.readouterr()
    print(result)
    shown = capsys.readouterr().out.strip()
    assert result.reason.kind == "aborted"
    last = shown.splitlines()[-1]  # never an empty line: how the turn ended, after what text it has
    assert last.startswith(("(aborted", "(no final text: aborted")) and result.session_id in last, shown


def test_a_step_from_the_turns_last_stage_does_not_pause_the_next_turn(
        shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    h = shell.run_cell("%dsh --bg --no-widget --break 01 read README.md and summarise").result
    assert h.wait_paused()["stage"] == "01"  # the read call's step
    h.continue_()
    assert h.wait_paused()["stage"] == "01"  # the final answer: the last stage of the turn
    h.step()  # nothing of this turn is left to step to
    assert h.wait(timeout=120).ok
    capsys.readouterr()
    nxt = shell.run_cell("%dsh read README.md and summarise")
    assert isinstance(nxt.result, TurnResult) and nxt.result.ok
    assert "paused at stage" not in capsys.readouterr().out
