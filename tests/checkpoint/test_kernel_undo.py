"""``%dsh undo`` in a real kernel: a turn whose ``python`` call clobbers, deletes and adds notebook
variables and whose ``write`` / ``bash`` calls change files is undone — files byte for byte,
variables back, the conversation forked before the turn (model: the loopback server)."""

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


def test_undo_puts_files_variables_and_conversation_back(kernel_env: dict[str, str],  # noqa: F811
                                                         fake_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("a,b\n1,2\n")
    (ws / "old.txt").write_text("to be removed\n")
    before = tree_state(ws)
    fake_server.enqueue(
        tool_call_reply([("c1", "python", json.dumps({"code": "df = 'clobbered'\ndel keep\nnew_var = [1]"}))]),
        tool_call_reply([("c2", "write", json.dumps({"file_path": "data.csv", "content": "overwritten\n"}))]),
        tool_call_reply([("c3", "bash", json.dumps({"command": "rm old.txt && echo made > new.txt"}))]),
        text_reply("done changing things"),
        text_reply("a fresh answer"),
    )
    flags = fake_flags(fake_server)
    cells = [
        "%load_ext dsh_notebook",
        "df = {'a': [1, 2]}\nkeep = 5",
        f"%dsh {flags} --cwd {ws} change everything",
        "print(df, 'keep' in globals(), 'new_var' in globals())",
        "%dsh changes",
        "%dsh undo",
        "print(df, keep, 'new_var' in globals())",
        f"%dsh {flags} what happened before?",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert "done changing things" in text_of(nb.cells[2])
    assert "clobbered False True" in text_of(nb.cells[3])
    changes = text_of(nb.cells[4])
    assert "+1 ~1 -1 files, variables: df, keep, new_var" in changes
    assert "-a,b" in changes and "+overwritten" in changes
    undo = text_of(nb.cells[5])
    assert "restore data.csv" in undo and "remove  new.txt" in undo
    assert "variables put back: df, keep, new_var" in undo and "it is now the current session" in undo
    assert "{'a': [1, 2]} 5 False" in text_of(nb.cells[6])
    assert tree_state(ws) == before
    # the conversation was forked before the undone turn: the next request does not carry it
    last = fake_server.requests[-1].messages
    assert not any("change everything" in json.dumps(m) for m in last)
    assert any("what happened before?" in json.dumps(m) for m in last)


def test_variables_come_back_in_a_new_kernel_of_the_same_session(kernel_env: dict[str, str],  # noqa: F811
                                                                 fake_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    ws = tmp_path / "ws"
    ws.mkdir()
    fake_server.enqueue(
        tool_call_reply([("c1", "python", json.dumps({"code": "df = 'clobbered'\ndel keep\nnew_var = [1]"}))]),
        text_reply("done changing things"),
    )
    sid_file = tmp_path / "sid.txt"
    first = [
        "%load_ext dsh_notebook",
        "df = {'a': [1, 2]}\nkeep = 5",
        f"r = %dsh {fake_flags(fake_server)} --cwd {ws} change the variables",
        f"open({str(sid_file)!r}, 'w').write(r.session_id)\nprint(df)",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in first])
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert "clobbered" in text_of(nb.cells[3])
    sid = sid_file.read_text()
    kept = list((Path(kernel_env["DSH_HOME"]) / "checkpoints" / "variables" / sid).iterdir())
    assert [p.name for p in kept] == ["1.json"] and kept[0].stat().st_mode & 0o777 == 0o600
    # a new kernel (the first one has ended): nothing in memory, the kept values read back from the store
    second = [
        "%load_ext dsh_notebook",
        "new_var = 'made here'",
        f"%dsh --session {sid} rewind 1 --variables",
        "print(df, keep, 'new_var' in globals())",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in second])
    NotebookClient(nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert "variables put back: df, keep, new_var" in text_of(nb.cells[2])
    assert "{'a': [1, 2]} 5 False" in text_of(nb.cells[3])
    assert not kept[0].exists()  # the undone turn's values are gone from the store
