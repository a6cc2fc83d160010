"""``%dsh --demo`` (issue 37 item 7, issue 39 item 5): any model on a fresh copy of the demo
workspace; without ``--demo`` or ``--cwd`` a real model works in the kernel's folder, and the
first line of a new session says which. ``run --demo`` does the same from the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.demo import is_demo_copy
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer, text_reply

from .conftest import fake_flags, magics_of


def test_demo_puts_a_real_model_on_a_fresh_demo_copy_and_says_so(
        shell: Any, fake_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_server.enqueue(text_reply("in the demo"), text_reply("still there"), text_reply("in my folder"))
    flags = f"--model openai:fake-model --base-url {fake_server.base_url}"
    first = shell.run_cell(f"%dsh --demo {flags} list the files").result
    said = capsys.readouterr().out
    created = magics_of(shell).sessions[first.session_id][0]
    assert is_demo_copy(created.cwd) and (Path(created.cwd) / "src" / "math.ts").is_file()
    assert created.approve == "auto"  # a demo copy: nothing of the user's to protect
    assert "(a fresh copy of the demo project; --cwd DIR for your own folder)" in said
    # the same flags again: the same session, on the same copy
    again = shell.run_cell(f"%dsh --demo {flags} and now?").result
    assert again.session_id == first.session_id
    # without --demo (and no --cwd) a real model works in the kernel's folder, and says so
    mine = shell.run_cell(f"%dsh --new {fake_flags(fake_server, 'ask')} hello").result
    said = capsys.readouterr().out
    assert magics_of(shell).sessions[mine.session_id][0].cwd == str(tmp_path)
    assert "(the kernel's working directory, the notebook's folder; --demo for a copy" in said
    # --demo with --cwd or --session: refused before anything is made
    for line in (f"%dsh --demo --cwd {tmp_path} hi", f"%dsh --demo --session {first.session_id} hi"):
        error = shell.run_cell(line).error_in_exec
        assert error is not None and error.error.code == "BAD_FLAG", line


def test_run_demo_works_on_a_fresh_demo_copy_with_a_real_model(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("done"))
        done = run_cli("run", "--demo", "--model", "fake-model", "--base-url", server.base_url, "hello",
                       home=tmp_path / "home", extra_env={"DSH_API_KEY": str(server.api_key)})
        assert done.returncode == 0, done.stderr
        _sid, log = session_of(done.stdout)
        header = Path(log).read_text().splitlines()[0]
        assert "dsh-demo-" in header and "/demo" in header
        refused = run_cli("run", "--demo", "--cwd", str(tmp_path), "hello", home=tmp_path / "home")
        assert refused.returncode == 2 and "[BAD_FLAG]" in refused.stderr
