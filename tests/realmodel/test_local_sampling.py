"""Issue 39 item 3 on the real model: with its card's sampling (temperature 0.2, top_p 0.9) a plain
question with ``--tools none`` completes — at least 4 of 5 runs end ``completed``, not at the output
limit (the default: a quarter of the server's context) — and every request says in its header what
it was sent. The answers' wording is not tested; that they end is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.config import Settings
from dsh_notebook.host.host import Host


@pytest.mark.timeout(900)  # five turns on one CPU thread, on a loaded machine
def test_a_plain_question_completes_in_at_least_four_of_five_runs(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_LOCAL_THREADS", "1")
    host = Host(Settings(home=tmp_path / "home"))
    client = DshClient(host)
    ends, headers = [], []
    try:
        for _ in range(5):  # five sessions, one server (started once, shared)
            created = client.create_session(cwd=str(tmp_path), model="local:smollm2", approve="deny", tools="none")
            outcome = client.run("Say hello in five words.", created.session_id, timeout=240)
            ends.append(outcome.reason.get("kind"))
            assert outcome.log_path is not None
            lines = Path(outcome.log_path).read_text().splitlines()
            headers += [json.loads(ln) for ln in lines if '"request/header"' in ln]
    finally:
        client.close()
        host.shutdown()
    assert ends.count("completed") >= 4, ends
    assert headers and all((h["config"]["temperature"], h["config"]["top_p"]) == (0.2, 0.9) for h in headers)
    assert all(h["tools"] == [] for h in headers)  # a plain chat turn
