"""Every fenced code block of README.md runs as written, or says why it cannot (issue 22).

``bash`` blocks run as one script each (``set -e -o pipefail``) in a scratch directory and
``DSH_HOME``, with the venv's ``bin`` first on ``PATH`` (the README says "with the venv active").
``console`` blocks run each ``$`` line and compare what it prints (stdout and stderr) with the lines
shown. ``python`` blocks are the cells of one notebook, in README order, executed by nbclient in a
real ``python3`` kernel. ``json`` blocks parse. Blocks marked ``<!-- not-tested: REASON -->`` are
skipped, with the reason. Everything runs on the scripted model, offline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from .blocks import EXECUTED, Block, blocks, console_steps, output_matches

REPO = Path(__file__).resolve().parents[2]
BLOCKS = blocks()


def of(lang: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang and b.skip is None]


def test_every_block_is_executed_or_marked_with_a_reason() -> None:
    assert len(BLOCKS) >= 15
    bad = [b.where() for b in BLOCKS if b.skip is None and b.lang not in EXECUTED]
    assert not bad, f"mark these <!-- not-tested: reason --> or make them {EXECUTED}: {bad}"
    assert all(b.skip.strip() for b in BLOCKS if b.skip is not None)
    assert of("bash") and of("python") and of("console")


def test_no_magic_line_carries_a_trailing_comment() -> None:
    """IPython hands a ``%`` line to the magic to its end: ``%dsh show  # …`` is not a comment."""
    bad = [(b.where(), line) for b in BLOCKS if b.lang == "python" for line in b.text.splitlines()
           if line.split("=", 1)[-1].lstrip().startswith("%") and " #" in line]
    assert not bad, bad


@pytest.mark.parametrize("block", of("json"), ids=lambda b: b.where())
def test_json_blocks_parse(block: Block) -> None:
    json.loads(block.text)


@pytest.fixture
def shell_env(isolated_dsh_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_MODEL", "VIRTUAL_ENV", "JPY_SESSION_NAME")}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONPATH": str(REPO), "DSH_HOME": str(isolated_dsh_home)})
    return env


@pytest.mark.slow
@pytest.mark.parametrize("block", of("bash"), ids=lambda b: b.where())
def test_shell_blocks_run_as_written(block: Block, shell_env: dict[str, str], tmp_path: Path) -> None:
    script = block.text  # as written: a block that needs a session makes one (`run`) and uses its id
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=shell_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{block.where()} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("block", of("console"), ids=lambda b: b.where())
def test_console_blocks_show_what_they_print(block: Block, shell_env: dict[str, str], tmp_path: Path) -> None:
    for command, expected in console_steps(block.text):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=shell_env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        actual = done.stdout.splitlines()
        assert output_matches(expected, actual), (f"{block.where()}: `{command}` printed:\n{done.stdout}\n"
                                                  f"the README shows:\n" + "\n".join(expected))


@pytest.mark.kernel
@pytest.mark.slow
def test_notebook_blocks_run_in_order_in_a_real_kernel(
        isolated_dsh_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.delenv("DSH_MODEL", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    cells = [new_code_cell(b.text, metadata={"readme_line": b.line}) for b in of("python")]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                            allow_errors=True)
    client.execute()
    failed = [(c.metadata["readme_line"], [f"{o['ename']}: {o['evalue']}" for o in c.outputs if o["output_type"] == "error"])
              for c in nb.cells if any(o["output_type"] == "error" for o in c.outputs)]
    assert not failed, f"README python blocks that failed (line, error): {failed}"
    nbformat.write(nb, tmp_path / "readme.ipynb")  # for a look after a failure
