"""papermill runs a parameterised ``%dsh`` notebook headless, on the embedded default model.

A notebook built with nbformat: a ``parameters`` cell (``prompt``), ``%load_ext dsh_notebook``,
``%dsh {prompt}`` and a cell that checks ``_`` is a completed ``TurnResult``. papermill injects
another prompt (the fix-the-tests task of seed 001) and executes it in a real ``python3`` kernel
with an isolated ``DSH_HOME``; the executed notebook is then read back and checked.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.fixtures.cells import joined_streams

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

papermill = pytest.importorskip("papermill", minversion="2.6", reason="pip install 'papermill>=2.6'")

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PROMPT = "read README.md and summarise"
TASK = "run the tests; if they fail fix src/math.ts; tell me the result"

CHECK_CELL = """\
from dsh_notebook.notebook.cell.result import TurnResult

r = _
assert isinstance(r, TurnResult), type(r)
assert r.reason.kind == "completed", r.reason
print("SESSION:", r.session_id)
print("TOOLS:", [call.name for call, _res in r.tool_calls])
print("ANSWER:", r.text)"""


def build_notebook(path: Path) -> None:
    params = new_code_cell(f"prompt = {DEFAULT_PROMPT!r}", metadata={"tags": ["parameters"]})
    nb = new_notebook(
        cells=[params, new_code_cell("%load_ext dsh_notebook"), new_code_cell("%dsh {prompt}"),
               new_code_cell(CHECK_CELL)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, path)


def text_of(cell: Any) -> str:
    """Everything a cell shows as text: streams, plain-text data and errors."""
    parts: list[str] = []
    for out in joined_streams(cell.get("outputs", [])):
        if out["output_type"] == "stream":
            parts.append(out["text"])
        elif out["output_type"] == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
        else:
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def test_papermill_runs_a_parameterised_dsh_notebook(
        isolated_dsh_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.environ["DSH_HOME"] == str(isolated_dsh_home)  # the kernel inherits it
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{path}" if path else str(REPO))
    src, dst = tmp_path / "task.ipynb", tmp_path / "task-out.ipynb"
    build_notebook(src)

    papermill.execute_notebook(str(src), str(dst), parameters={"prompt": TASK}, kernel_name="python3",
                               cwd=str(tmp_path), progress_bar=False, execution_timeout=180)

    nb = nbformat.read(dst, as_version=4)
    errors = [(i, text_of(c)) for i, c in enumerate(nb.cells)
              if any(o["output_type"] == "error" or o.get("name") == "stderr" for o in c.get("outputs", []))]
    assert not errors, errors
    assert nb.metadata["papermill"]["parameters"] == {"prompt": TASK}
    assert [c.metadata.get("papermill", {}).get("status") for c in nb.cells] == ["completed"] * 5
    # papermill put its injected cell right after the tagged one; the default stays above it
    assert nb.cells[0].metadata["tags"] == ["parameters"] and DEFAULT_PROMPT in nb.cells[0].source
    assert nb.cells[1].metadata["tags"] == ["injected-parameters"] and f'prompt = "{TASK}"' in nb.cells[1].source
    assert [c.execution_count for c in nb.cells] == [1, 2, 3, 4, 5]

    # the %dsh cell: the task ran on the embedded default, with the real tools, and completed
    dsh = text_of(nb.cells[3])
    assert "script:auto" in dsh and "node test/run.mjs" in dsh, dsh
    assert "<TurnResult completed" in dsh, dsh
    # the check cell: `_` was a completed TurnResult, whose answer says the tests pass now
    check = text_of(nb.cells[4])
    assert "TOOLS: ['bash', 'read', 'edit', 'bash']" in check, check
    answer = check.split("ANSWER:", 1)[1]
    assert "the tests pass now" in answer and "all 6 tests passed" in answer, answer
    # the session was logged under the isolated DSH_HOME
    session_id = check.split("SESSION:", 1)[1].split()[0]
    assert (isolated_dsh_home / "sessions" / f"{session_id}.jsonl").is_file()
