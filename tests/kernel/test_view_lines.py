"""Every ``%dsh`` view line shows its output where it stands in a cell, once (view_lines.py), on
real kernels executed by nbclient as ``jupyter nbconvert --execute`` runs them: IPython's
``python3`` with ``%load_ext dsh_notebook`` and the agent kernel ``dsh``; the scripted model.

- two views in one cell: both, in order (the first a ``display_data``, the last the cell's ``Out``);
- a view, then other code: the view, and the other code's ``Out`` (``1+1`` → 2);
- ``x = %dsh sessions``: nothing shown, ``x`` holds the table;
- a view as the last line: shown exactly once, as ``Out[n]``, and ``_`` holds it;
- a prompt renders once (live), its ``TurnResult`` is the ``Out`` only when it ends the cell;
- other code of the cell is not displayed (an expression that is not last stays silent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel

KERNELSPEC = {"name": "dsh", "display_name": "Agent (dsh)", "language": "dsh"}


def run(kernel: str, cells: list[str], cwd: Path) -> list[Any]:
    meta = {"kernelspec": KERNELSPEC} if kernel == "dsh" else {}
    nb = nbformat.v4.new_notebook(metadata=meta, cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=180, kernel_name=kernel, allow_errors=False,
                   resources={"metadata": {"path": str(cwd)}}).execute()  # raises on any cell error
    return list(nb.cells)


def shown(cell: Any) -> list[tuple[str, str]]:
    """``(output_type, what)`` of each rich output, in order: ``sessions`` / ``config`` / ``stats``
    for the views, ``turn`` for a prompt's live display, ``result`` for its ``TurnResult``, else the
    ``text/plain``."""
    out = []
    for o in cell.outputs:
        if o.output_type not in ("display_data", "execute_result"):
            continue
        text = o.data.get("text/plain", "")
        if text.startswith("id ") and "last activity" in text:
            what = "sessions"
        elif text.startswith("model ") and "sessions dir" in text:
            what = "config"
        elif text.startswith("session s_") and "requests" in text.lower():
            what = "stats"
        elif text.startswith("<TurnResult "):
            what = "result"
        elif "text/html" in o.data and "dsh-answer" in o.data["text/html"]:
            what = "turn"
        else:
            what = text
        out.append((o.output_type, what))
    return out


def count(cell: Any) -> int | None:
    [result] = [o for o in cell.outputs if o.output_type == "execute_result"] or [None]
    return result.execution_count if result is not None else None


def test_python3_every_view_line_shows_where_it_stands_once(agent_env: dict[str, str], tmp_path: Path) -> None:
    cells = run("python3", [
        "%load_ext dsh_notebook",
        "%dsh what can you do?",
        "%dsh sessions\n%dsh config",
        "%dsh config\n1+1",
        "x = %dsh sessions",
        "type(x).__name__, len(x)",
        "%dsh sessions",
        "type(_).__name__, _.rows == x.rows",
        "%dsh config\n%dsh which files are there?\n%dsh sessions",
        "41\n%dsh show --stats\n2 * 21",
        "s = %dsh show --stats\ntype(s).__name__",
        "%%dsh --no-widget\nread README.md and summarise",
        "%dsh sessions\n%dsh sessions;",
    ], tmp_path)
    prompt = cells[1]
    assert shown(prompt) == [("display_data", "turn"), ("execute_result", "result")]  # rendered once, then Out
    assert shown(cells[2]) == [("display_data", "sessions"), ("execute_result", "config")]
    assert shown(cells[3]) == [("display_data", "config"), ("execute_result", "2")]
    assert cells[4].outputs == []  # an assignment shows nothing
    assert shown(cells[5]) == [("execute_result", "('SessionTable', 1)")]
    assert shown(cells[6]) == [("execute_result", "sessions")] and count(cells[6]) == 7  # once, as Out[7]
    assert shown(cells[7]) == [("execute_result", "('SessionTable', True)")]  # `_` is that table
    # a prompt between two views: the views where they stand, the turn live, its TurnResult not again
    assert shown(cells[8]) == [("display_data", "config"), ("display_data", "turn"), ("execute_result", "sessions")]
    assert shown(cells[9]) == [("display_data", "stats"), ("execute_result", "42")]  # 41 stays silent
    assert shown(cells[10]) == [("execute_result", "'StatsView'")]
    assert shown(cells[11]) == [("display_data", "turn"), ("execute_result", "result")]  # %%dsh: as %dsh
    assert shown(cells[12]) == [("display_data", "sessions")]  # `;` silences the last line, as in Python


def test_the_agent_kernels_view_lines_show_where_they_stand_once(agent_env: dict[str, str], tmp_path: Path) -> None:
    cells = run("dsh", [
        "what can you do?",
        "%dsh sessions\n%dsh config",
        "%dsh config\nwhich files are there?",
        "%%python\nx = %dsh sessions",
        "%%python\ntype(x).__name__, len(x)",
        "%dsh sessions",
        "%%python\ntype(_).__name__, _.rows == x.rows",
        "%dsh config\nwhat does src/math.ts do?\n%dsh sessions",
        "%%dsh --no-widget\nwhich files are there?\n%dsh sessions",
    ], tmp_path)
    assert shown(cells[0]) == [("display_data", "turn"), ("execute_result", "result")]
    assert shown(cells[1]) == [("display_data", "sessions"), ("execute_result", "config")]
    assert shown(cells[2]) == [("display_data", "config"), ("display_data", "turn"), ("execute_result", "result")]
    assert cells[3].outputs == []
    assert shown(cells[4]) == [("execute_result", "('SessionTable', 1)")]
    assert shown(cells[5]) == [("execute_result", "sessions")] and count(cells[5]) == 6
    assert shown(cells[6]) == [("execute_result", "('SessionTable', True)")]
    assert shown(cells[7]) == [("display_data", "config"), ("display_data", "turn"), ("execute_result", "sessions")]
    # a %%dsh cell is one prompt (its body, `%dsh` line included): rendered once, then Out
    assert shown(cells[8]) == [("display_data", "turn"), ("execute_result", "result")]
