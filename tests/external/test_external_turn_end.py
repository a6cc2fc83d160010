"""``external/end`` of an external turn (issue 41) is answered once that turn is over: the host
logs ``turn/end`` and the session is idle before the MCP server hears back. A real host with its checkpoints (the launcher's), in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings
from dsh_notebook.launcher import new_host
from dsh_notebook.session.persistence import load_log

pytestmark = pytest.mark.unit


def test_external_end_answers_once_the_external_turn_is_over(tmp_path: Path) -> None:
    """The answer to ``external/end`` of a write comes after its turn ended (``turn/end`` logged,
    the session idle), so a person's ``%dsh undo`` right after the MCP call returns finds the turn
    over — not ``SESSION_BUSY`` (it was answered before the turn's checkpoint and end)."""
    host = new_host(Settings(home=tmp_path / "home"), name="test-external-end")  # with the checkpoints
    dsh = DshClient(host, caller="test")
    try:
        (tmp_path / "work").mkdir()
        sid = dsh.create_session(cwd=str(tmp_path / "work"), model="script:auto", approve="auto").session_id
        for n in range(3):
            call = f"x{n}"
            begun = dsh.remote.external.begin(session_id=sid, call_id=call, tool="execute_code",
                                              arguments='{"code": "1"}', client={"name": "c"})
            assert begun.allowed and begun.turn == n + 1
            dsh.remote.external.end(session_id=sid, call_id=call, content=[{"type": "text", "text": "1"}])
            info = dsh.info(sid)
            assert (info.status, info.turn) == ("idle", None), n
            assert load_log(Path(info.log_path or "")).events[-1].type == "turn/end"
    finally:
        dsh.close()
        host.shutdown()
