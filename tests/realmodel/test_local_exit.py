"""Issue 39 items 3 and 7 in a real IPython process on the real local model: a ``local:`` turn, then
``%dsh config`` (the model card's sampling, what ``--option`` overrode), then leaving IPython —
no traceback at interpreter exit, no llama.cpp process left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """\
%load_ext dsh_notebook
%dsh --model local:smollm2 --tools none --max-tokens 8 --max-steps 2 --option temperature=0 --approve deny --cwd {ws} Say hi.
print("CONFIG", json.dumps(dict(get_ipython().run_line_magic("dsh", "config").items)))
from dsh_notebook.models import local_server
print("WORKERS", json.dumps([s.proc.pid for s in local_server._servers.values() if s.proc is not None]))
"""


def _line(stdout: str, tag: str) -> object:
    found = [ln for ln in stdout.splitlines() if ln.startswith(tag + " ")]
    assert found, stdout
    return json.loads(found[-1][len(tag) + 1:])


def test_leaving_ipython_after_a_local_turn_is_clean_and_leaves_no_server(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    script = tmp_path / "turn.ipy"
    script.write_text("import json\n" + SCRIPT.format(ws=tmp_path / "ws"))
    mark = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(REPO), "DSH_HOME": str(tmp_path / "home"), "DSH_LOCAL_THREADS": "1",
           "DSH_TEST_MARK": mark, "IPYTHONDIR": str(tmp_path / "ipython")}
    done = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--colors=NoColor", str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=280)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Traceback" not in out and "failed" not in out and "Error" not in out, out
    config = _line(done.stdout, "CONFIG")
    assert isinstance(config, dict)
    assert config["model defaults"] == "top_p=0.9 (the model card's sampling; temperature set by --option)"
    assert config["request options"].startswith("temperature=0 ")
    workers = _line(done.stdout, "WORKERS")
    assert isinstance(workers, list) and len(workers) == 1  # the server was alive until the exit
    alive = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if "dsh_notebook.models.local_worker" in (proc.info.get("cmdline") or []) and \
                    proc.environ().get("DSH_TEST_MARK") == mark:
                alive.append(proc.pid)
        except psutil.Error:
            pass
    assert alive == []  # gone with IPython (its pid is not reused by another worker of this run)
