"""``make demo-headless``'s runner (``python -m dsh_notebook.kernel.walkthrough``) prints its own
lines only (issue 39 item 11): the kernels it starts talk over private IPC sockets (so ipykernel has
no "running over TCP without encryption" warning to print) with debugpy's file validation off (no
frozen-modules warning), and nothing of theirs is left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]


def test_the_runner_prints_only_its_own_lines(tmp_path: Path) -> None:
    src = tmp_path / "nb"
    src.mkdir()
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}},
                                  cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nbformat.write(nb, src / "01-tiny.ipynb")
    env = {k: v for k, v in os.environ.items() if k != "PYDEVD_DISABLE_FILE_VALIDATION"}
    env.update({"PYTHONPATH": str(REPO), "DSH_HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path)})
    done = subprocess.run([sys.executable, "-m", "dsh_notebook.kernel.walkthrough", str(src), str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "", done.stderr  # no kernel warning reaches this command's output
    [line] = done.stdout.splitlines()
    assert line.startswith("ok     01-tiny.ipynb -> ")
    executed = nbformat.read(tmp_path / "out" / "01-tiny.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "42\n"
    assert not list(tmp_path.glob("dsh-kernel-*"))  # the socket folder went with the kernel
