"""Every fenced code block of the docs runs as written, or is checked in a way that can fail (issue 22,
issue 40 item 1): README.md, CONTRIBUTING.md and every page of docs/.

``bash`` blocks run as one script each (``set -e -o pipefail``) in a scratch directory (CONTRIBUTING's:
in the repository, where a contributor types them) and a scratch ``DSH_HOME``, with the venv's
``bin`` first on ``PATH`` (the docs say "with the venv active").
``console`` blocks run each ``$`` line and compare what it prints (stdout and stderr) with the lines
shown. A page's ``python`` blocks are the cells of one notebook, in the page's order, executed by
nbclient in a real ``python3`` kernel. ``json`` blocks parse; ``jsonl`` lines validate as
session-log lines. A block marked ``<!-- check KIND: why -->`` is checked by KIND (checks.py).
Everything runs on the scripted model, offline.
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

from . import checks
from .blocks import (
    CHECKS,
    EXECUTED,
    ROOT,
    Block,
    all_blocks,
    console_steps,
    doc_files,
    output_matches,
    runs,
)

BLOCKS = all_blocks()


def of(lang: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang == lang and runs(b)]


def marked(kind: str) -> list[Block]:
    return [b for b in BLOCKS if b.check == kind]


def ids(block: Block) -> str:
    return block.where()


def test_every_block_runs_or_is_checked() -> None:
    assert len(doc_files()) >= 20 and len(BLOCKS) >= 40
    old = [b.where() for b in BLOCKS if b.old_mark]
    assert not old, f"<!-- not-tested: … --> is retired: run the block, or mark it <!-- check KIND: why --> ({old})"
    unknown = [b.where() for b in BLOCKS if b.check is not None and b.check not in CHECKS]
    assert not unknown, f"check KINDs are {sorted(CHECKS)}: {unknown}"
    wrong = [b.where() for b in BLOCKS if b.check is not None and b.lang not in CHECKS[b.check]]
    assert not wrong, f"a check goes with its language ({CHECKS}): {wrong}"
    neither = [b.where() for b in BLOCKS if b.check is None and b.lang not in EXECUTED]
    assert not neither, f"make these {EXECUTED} or mark them <!-- check KIND: why -->: {neither}"
    assert all(b.reason for b in BLOCKS if b.check is not None), "a check says why the block cannot run"
    assert of("bash") and of("python") and of("console") and marked("commands") and marked("magics")


def test_no_magic_line_carries_a_trailing_comment() -> None:
    """IPython hands a ``%`` line to the magic to its end: ``%dsh show  # …`` is not a comment."""
    bad = [(b.where(), line) for b in BLOCKS if b.lang == "python" for line in b.text.splitlines()
           if line.split("=", 1)[-1].lstrip().startswith("%") and " #" in line]
    assert not bad, bad


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "json"], ids=ids)
def test_json_blocks_parse(block: Block) -> None:
    json.loads(block.text)


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang == "jsonl"], ids=ids)
def test_jsonl_blocks_are_session_log_lines(block: Block) -> None:
    from dsh_notebook.wire.log import LogLineAdapter

    lines = [line for line in block.text.splitlines() if line.strip()]
    assert lines
    for line in lines:
        LogLineAdapter.validate_json(line)


@pytest.mark.parametrize("block", marked("commands"), ids=ids)
def test_commands_that_cannot_run_are_right(block: Block) -> None:
    assert checks.check_commands(block.text) == [], block.where()


@pytest.mark.parametrize("block", marked("magics"), ids=ids)
def test_notebook_cells_that_cannot_run_are_right(block: Block) -> None:
    assert checks.check_magics(block.text) == [], block.where()


@pytest.mark.parametrize("block", marked("mcp-client"), ids=ids)
def test_external_agents_configs_point_at_the_notebook_server(block: Block) -> None:
    assert checks.check_mcp_client(block.text, block.lang) == [], block.where()


@pytest.mark.parametrize("block", [b for kind in checks.FILE_CHECKS for b in marked(kind)], ids=ids)
def test_config_files_load_as_the_code_reads_them(block: Block) -> None:
    assert checks.check_file(str(block.check), block.text) == [], block.where()


@pytest.fixture
def shell_env(isolated_dsh_home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DSH_MODEL", "VIRTUAL_ENV", "JPY_SESSION_NAME")}
    env.update({"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "PYTHONPATH": str(ROOT), "DSH_HOME": str(isolated_dsh_home)})
    return env


@pytest.mark.slow
@pytest.mark.parametrize("block", of("bash"), ids=ids)
def test_shell_blocks_run_as_written(block: Block, shell_env: dict[str, str], tmp_path: Path) -> None:
    script = block.text  # as written: a block that needs a session makes one (`run`) and uses its id
    where = ROOT if block.page == "CONTRIBUTING.md" else tmp_path  # a contributor's commands run in the clone
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], env=shell_env, cwd=where,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{block.where()} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("block", of("console"), ids=ids)
def test_console_blocks_show_what_they_print(block: Block, shell_env: dict[str, str], tmp_path: Path) -> None:
    for command, expected in console_steps(block.text):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=shell_env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        actual = done.stdout.splitlines()
        assert output_matches(expected, actual), (f"{block.where()}: `{command}` printed:\n{done.stdout}\n"
                                                  f"the page shows:\n" + "\n".join(expected))


PAGES_WITH_CELLS = sorted({b.page for b in of("python")})


@pytest.mark.kernel
@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES_WITH_CELLS)
def test_notebook_blocks_run_in_order_in_a_real_kernel(
        page: str, isolated_dsh_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("DSH_MODEL", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    cells = [new_code_cell(b.text, metadata={"doc_line": b.line}) for b in of("python") if b.page == page]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                            "language": "python"}})
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                            allow_errors=True)
    client.execute()
    failed = [(c.metadata["doc_line"], [f"{o['ename']}: {o['evalue']}" for o in c.outputs if o["output_type"] == "error"])
              for c in nb.cells if any(o["output_type"] == "error" for o in c.outputs)]
    assert not failed, f"{page}: python blocks that failed (line, error): {failed}"
    nbformat.write(nb, tmp_path / "page.ipynb")  # for a look after a failure
