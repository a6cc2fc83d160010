"""The README's pip route, as a newcomer takes it (issue 39 item 4): a copy of this checkout
installed with ``pip install .`` into a fresh virtual environment (the widget built by the
package's own build hook, nothing taken from the development venv), the agent kernel installed
with ``install-kernel``, then the Quick start's cells executed by nbclient in that venv's own
``python3`` kernel — the demo copy summarised, then ``--cwd .`` on the person's own folder.

The venv is made by ``python -m venv`` with no access to this environment's packages; pip reads
PyPI (the CI machine's cache makes the second install quick)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .blocks import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# the Quick start's two python blocks, as README.md shows them (checked below, so a README edit
# that changes them fails here rather than testing something else)
QUICK_START = ["%load_ext dsh_notebook\n%dsh read README.md and summarise",
               "%dsh --new --cwd . which files are there?"]

RUN_CELLS = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook
cells = json.loads(sys.argv[1])
nb = new_notebook(cells=[new_code_cell(c) for c in cells])
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": sys.argv[2]}}).execute()
out = []
for cell in nb.cells:
    parts = []
    for o in cell.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type in ("display_data", "execute_result"):
            parts.append(o.data.get("text/plain", ""))
        elif o.output_type == "error":
            parts.append("ERROR " + o.ename + ": " + o.evalue)
    out.append("".join(parts))
print(json.dumps(out))
"""


def _copy_checkout(dst: Path) -> None:
    """The files a clone has (tracked, and new ones not ignored), as they are in this checkout."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)


def _clean_env(home: Path, venv: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CACHE_DIR",
            "npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_cache")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), DSH_HOME=str(home / ".dsh"), VIRTUAL_ENV=str(venv),
               PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if "PIP_CACHE_DIR" not in env:  # the machine's pip cache, though HOME is a scratch one
        env["PIP_CACHE_DIR"] = str(Path(os.environ.get("HOME", "/root")) / ".cache" / "pip")
    if "npm_config_cache" not in env:
        env["npm_config_cache"] = str(Path(os.environ.get("HOME", "/root")) / ".npm")
    return env


def test_the_readme_pip_route_from_a_clone_runs_the_quick_start(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert "pip install .  " in readme and "python -m dsh_notebook install-kernel" in readme
    for cell in QUICK_START:
        assert all(line in readme for line in cell.splitlines()), f"the Quick start no longer shows {cell!r}"

    clone, venv, home, mine = tmp_path / "clone", tmp_path / "venv", tmp_path / "home", tmp_path / "my-project"
    for d in (clone, home, mine):
        d.mkdir()
    _copy_checkout(clone)
    assert not (clone / "dsh_notebook" / "static" / "widget.js").exists()  # the build hook must make it
    (mine / "notes-of-mine.txt").write_text("my own file\n")
    env = _clean_env(home, venv)

    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    py = str(venv / "bin" / "python")
    # the route's lines; nbclient stands in for `pip install jupyterlab` (the client this test drives)
    done = subprocess.run([py, "-m", "pip", "install", "-q", str(clone), "nbclient"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-4000:]
    where = subprocess.run([py, "-c", "import dsh_notebook, pathlib; p = pathlib.Path(dsh_notebook.__file__).parent; "
                            "print(p); print((p / 'static' / 'widget.js').stat().st_size)"],
                           env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert Path(where[0]).is_relative_to(venv), where  # the venv's own copy, not this checkout
    assert int(where[1]) > 10_000, where  # the widget was built into the package

    kernel = subprocess.run([py, "-m", "dsh_notebook", "install-kernel"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert kernel.returncode == 0, kernel.stderr
    specs = subprocess.run([py, "-m", "jupyter", "kernelspec", "list"], env=env, capture_output=True, text=True)
    assert "dsh" in specs.stdout, specs.stdout + specs.stderr

    ran = subprocess.run([py, "-c", RUN_CELLS, json.dumps(QUICK_START), str(mine)], env=env,
                         cwd=mine, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-4000:]
    first, second = json.loads(ran.stdout.splitlines()[-1])
    assert "ERROR" not in first + second, (first, second)
    assert "a fresh copy of the demo project" in first and "completed" in first, first
    assert "completed" in second and "notes-of-mine.txt" in second, second
    assert "fresh copy of the demo" not in second, second
