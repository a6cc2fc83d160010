"""Issue 35 finding 13: rewinding variables in a fresh kernel crashed half-way on a value that did
not unpickle there (an instance of a class the first kernel defined): files rewound, conversation
forked, an internal error, nothing logged. Now the value was never kept (not JSON, NumPy or
Parquet data), the rewind says so, and files, the other variables and the conversation go back
together — and the rewind is logged. The magic is spelled as the CLI is (``--to-turn N``). Real
kernels; the model is the loopback server."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.checkpoint.support import tree_state
from tests.fixtures.cells import cell_text
from tests.notebook.conftest import fake_flags, fake_server, kernel_env  # noqa: F401 (fixtures)
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.kernel
text_of = partial(cell_text, markdown=False)


def _run(cells: list[str], tmp_path: Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def test_a_fresh_kernel_rewinds_everything_or_nothing(kernel_env: dict[str, str],  # noqa: F811
                                                      fake_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("a,b\n1,2\n")
    before = tree_state(ws)
    fake_server.enqueue(
        tool_call_reply([("c1", "python", json.dumps({"code": "obj = 'clobbered'\ndf = 'clobbered'"}))]),
        tool_call_reply([("c2", "write", json.dumps({"file_path": "data.csv", "content": "overwritten\n"}))]),
        text_reply("done"),
    )
    sid_file = tmp_path / "sid.txt"
    first = _run([
        "%load_ext dsh_notebook",
        "class Local:\n    pass\nobj = Local()\ndf = {'a': [1, 2]}",
        f"r = %dsh {fake_flags(fake_server)} --cwd {ws} change things",
        f"open({str(sid_file)!r}, 'w').write(r.session_id)",
    ], tmp_path)
    assert "done" in text_of(first.cells[2])
    sid = sid_file.read_text()
    # a fresh kernel: Local is not defined here
    second = _run([
        "%load_ext dsh_notebook",
        "obj, df = 'now', 'now'",
        f"%dsh rewind {sid} --to-turn 1",
        "print(repr(obj), df)",
    ], tmp_path)
    out = text_of(second.cells[2])
    assert "restore data.csv" in out and "variables put back: df" in out, out
    assert "variable not restored: obj: a __main__.Local is kept only as JSON, NumPy or Parquet data" in out, out
    assert "forked before turn 1" in out, out
    assert "'now' {'a': [1, 2]}" in text_of(second.cells[3])
    assert tree_state(ws) == before
    log = Path(kernel_env["DSH_HOME"]) / "sessions" / f"{sid}.jsonl"
    restored = [e for e in map(json.loads, log.read_text().splitlines()[1:]) if e["type"] == "checkpoint/restored"]
    assert len(restored) == 1 and restored[0]["variables"] == ["df"] and restored[0]["written"] == ["data.csv"]
    assert restored[0]["variablesNotRestored"][0].startswith("obj: ") and restored[0]["forked"]
