"""The request flags on ``%dsh`` and the ``DshMagics`` traits (issue 20 items 1/2/7): they reach the
requests, change the session from that prompt on, and ``%dsh config`` shows them with the window —
an ``InteractiveShell`` against the loopback OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.notebook.conftest import fake_flags, fake_server, magics_of, shell
from tests.support.fake_openai import FakeOpenAIServer, text_reply

__all__ = ["fake_server", "shell"]


def test_the_magic_flags_and_traits_reach_the_requests(shell: Any, fake_server: FakeOpenAIServer,
                                                       tmp_path: Path) -> None:
    magics = magics_of(shell)
    magics.options = {"top_p": 0.9, "seed": 1}
    magics.max_tokens = 100
    fake_server.enqueue(text_reply("one"), text_reply("two"))
    first = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server)} --option seed=7 "
                           "--option 'stop=[\"END\"]' say one").result
    assert first.ok, first
    body = fake_server.requests[-1].body
    assert (body["max_tokens"], body["top_p"], body["seed"], body["stop"]) == (100, 0.9, 7, ["END"])
    again = shell.run_cell("%dsh --max-tokens 20 --option seed=null say two").result  # the same session
    assert again.ok and again.session_id == first.session_id
    body = fake_server.requests[-1].body
    assert body["max_tokens"] == 20 and "seed" not in body and body["top_p"] == 0.9
    items = shell.run_cell("%dsh config").result.items
    assert items["output limit"].startswith("20 tokens")
    assert items["request options"].startswith('top_p=0.9, stop=["END"]')
    assert items["tools offered"].startswith("all")
    assert items["context window"].startswith("unknown")  # the live session's window (none known), not the default line


def test_a_bad_flag_value_is_a_coded_error_and_sends_nothing(shell: Any, fake_server: FakeOpenAIServer,
                                                             tmp_path: Path) -> None:
    cell = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server)} --max-tokens none hi")
    assert cell.error_in_exec is not None and "BAD_CONFIG" in str(cell.error_in_exec)
    assert fake_server.requests == []
