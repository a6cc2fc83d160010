"""Executed notebooks (``jupyter nbconvert --execute``, papermill): the saved ``.ipynb`` holds the
tool lines and the final answer as text any viewer shows — ``text/plain`` / ``text/html`` or a
stream — with no kernel and no widget manager. Both kernels; the real CLIs as subprocesses."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.fixtures.cells import joined_streams

from .conftest import BIN

pytestmark = [pytest.mark.kernel, pytest.mark.slow, pytest.mark.e2e]  # tier: nbconvert and papermill walkthroughs

FIX = "run the tests; if they fail fix src/math.ts; tell me the result"
SPECS = {"python3": {"name": "python3", "display_name": "Python 3", "language": "python"},
         "dsh": {"name": "dsh", "display_name": "Agent (dsh)", "language": "dsh"}}


def build(path: Path, kernel: str) -> None:
    cells = ([new_code_cell("%load_ext dsh_notebook"), new_code_cell(f"%dsh {FIX}")] if kernel == "python3"
             else [new_code_cell(FIX)])
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": SPECS[kernel]}), path)


def viewer_text(cell: Any) -> tuple[str, str]:
    """(plain, rich): what a viewer without a kernel shows of a cell's outputs — the rich view is
    the text of the turn's ``text/html`` (tags dropped, entities read)."""
    plain: list[str] = []
    rich: list[str] = []
    for out in joined_streams(cell.get("outputs", [])):
        if out["output_type"] == "stream":
            plain.append(out["text"])
        elif out["output_type"] in ("display_data", "execute_result"):
            data = out.get("data", {})
            plain.append(str(data.get("text/plain", "")))
            if out["output_type"] == "display_data":
                rich.append(html.unescape(re.sub(r"<[^>]*>", "", str(data.get("text/html", "")))))
    return "\n".join(plain), "\n".join(rich)


def check_turn(cell: Any) -> None:
    plain, markdown = viewer_text(cell)
    for text in (plain, markdown):
        for part in ("bash", "node test/run.mjs", "2 of 6 tests failed", "src/math.ts", "all 6 tests passed",
                     "Result: the tests pass now"):
            assert part in text, f"{part!r} not in:\n{text}"
    assert plain.count("Result: the tests pass now") == 1, plain  # the answer once, not per update
    assert not any(o["output_type"] == "error" for o in cell.outputs), cell.outputs
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in cell.outputs)


# The kernel's channels over IPC files, not TCP ports: with TCP, jupyter_client picks free ports and
# the kernel binds them a moment later, and a test on the other worker can take one in between
# ("Address already in use", the kernel dies). What nbconvert does with the kernel is the same.
IPC = ("--KernelManager.transport=ipc",)


@pytest.mark.parametrize("kernel", ["python3", "dsh"])
def test_nbconvert_execute_saves_tool_lines_and_answer_as_text(
        kernel: str, client_env: dict[str, str], tmp_path: Path) -> None:
    src = tmp_path / "task.ipynb"
    build(src, kernel)
    done = subprocess.run([str(BIN / "jupyter-nbconvert"), "--to", "notebook", "--execute", str(src),
                           "--output", "task-out.ipynb", "--ExecutePreprocessor.timeout=180", *IPC],
                          env=client_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    nb = nbformat.read(tmp_path / "task-out.ipynb", as_version=4)
    check_turn(nb.cells[-1])


def test_papermill_saves_tool_lines_and_answer_as_text(client_env: dict[str, str], tmp_path: Path) -> None:
    src, dst = tmp_path / "task.ipynb", tmp_path / "task-out.ipynb"
    build(src, "python3")
    done = subprocess.run([str(BIN / "papermill"), str(src), str(dst), "--cwd", str(tmp_path),
                           "--no-progress-bar", "--execution-timeout", "180"],
                          env=client_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    check_turn(nbformat.read(dst, as_version=4).cells[-1])


def test_without_stdin_pause_notices_are_saved_in_order_with_the_turns_text(
        client_env: dict[str, str], tmp_path: Path) -> None:
    src = tmp_path / "debug.ipynb"
    cells = [new_code_cell("%load_ext dsh_notebook"), new_code_cell(f"%dsh --break 03 {FIX}")]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": SPECS["python3"]}), src)
    done = subprocess.run([str(BIN / "jupyter-nbconvert"), "--to", "notebook", "--execute", str(src),
                           "--output", "debug-out.ipynb", "--ExecutePreprocessor.timeout=180", *IPC],
                          env=client_env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    cell = nbformat.read(tmp_path / "debug-out.ipynb", as_version=4).cells[-1]
    flat = "\n".join(o["text"] if o["output_type"] == "stream" else str(o.get("data", {}).get("text/plain", ""))
                     for o in joined_streams(cell.outputs))
    order = ["I'll run the tests first.", "paused at stage 03", "no stdin to answer the debugger on",
             "exit 1 · 2 of 6 tests failed", "Let me look at src/math.ts", "paused at stage 03",
             "✓ src/math.ts: 20 lines", "Result: the tests pass now"]
    at = 0
    for part in order:
        found = flat.find(part, at)
        assert found >= 0, f"{part!r} not in order after {at}:\n{flat}"
        at = found + len(part)
