"""``%dsh`` in terminal IPython (``InteractiveShell``): blocking prompts, subcommands, config.

The scripted model drives real tools on a copy of the demo workspace; the Host runs on its own
thread exactly as in a kernel. Output goes to stdout (the stream sink) in a terminal shell.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.notebook.cell.result import TurnResult
from dsh_notebook.notebook.cell.turn import CellTurn
from dsh_notebook.notebook.magic.magics import DshMagicError, DshMagics
from dsh_notebook.notebook.magic.views import ConfigView, EventListing, SessionTable
from dsh_notebook.wire.events import ToolCall, UserMessageEvent

from .conftest import magics_of


def test_load_twice_registers_one_magic(shell: Any) -> None:
    shell.run_line_magic("load_ext", "dsh_notebook")
    shell.run_line_magic("reload_ext", "dsh_notebook")
    assert "dsh" in shell.magics_manager.magics["line"] and "dsh" in shell.magics_manager.magics["cell"]
    assert sum(isinstance(c, DshMagics) for c in shell.configurables) == 1
    assert "--no-interpolate" in (shell.find_line_magic("dsh").__doc__ or "")


@pytest.mark.integration
def test_blocking_prompt_streams_tool_calls_and_returns_a_turn_result(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result = shell.run_cell("%dsh run the tests; if they fail fix src/math.ts").result
    out = capsys.readouterr().out
    assert isinstance(result, TurnResult) and result.ok and result.turn == 1
    assert [call.name for call, _ in result.tool_calls] == ["bash", "read", "edit", "bash"], (out, result.events)
    assert all(res is not None and res.error is None for _, res in result.tool_calls)
    assert "→ bash node test/run.mjs" in out and "→ edit" in out and "✓" in out
    assert result.text and result.text in out  # the answer was streamed into the output
    assert "script:auto" in out and out.count("no model configured") == 1
    session = magics_of(shell).sessions[result.session_id][0]
    assert "return a - b;" in (Path(session.cwd) / "src/math.ts").read_text()
    assert result.session_id in result._repr_html_() and "completed" in result._repr_markdown_()
    assert repr(result).startswith("<TurnResult completed")


def test_second_prompt_reuses_the_session_and_says_the_model_notice_once(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    first = shell.run_cell("%dsh hello").result
    second = shell.run_cell("%dsh hello again").result
    new = shell.run_cell("%dsh --new hello there").result
    out = capsys.readouterr().out
    assert first.session_id == second.session_id != new.session_id
    assert (first.turn, second.turn, new.turn) == (1, 2, 1)
    assert out.count("no model configured") == 1


def test_cell_magic_interpolates_notebook_variables(shell: Any) -> None:
    shell.user_ns["target"] = "README.md"
    result = shell.run_cell("%%dsh\nread {target} and summarise").result
    prompt = next(e for e in result.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user")
    assert prompt.message.content[0].text == "read README.md and summarise"
    assert any(isinstance(e, ToolCall) and e.name == "read" for e in result.events)
    literal = shell.run_cell("%dsh --no-interpolate say {target} and {undefined}").result
    prompt2 = next(e for e in literal.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user")
    assert prompt2.message.content[0].text == "say {target} and {undefined}"


def test_errors_are_one_line_not_tracebacks(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bad = shell.run_cell("%dsh --bogus hi")
    missing = shell.run_cell("%dsh explain {nothing_here}")
    captured = capsys.readouterr()
    text = re.sub(r"\x1b\[[0-9;]*m", "", captured.out + captured.err)
    assert isinstance(bad.error_in_exec, DshMagicError) and bad.error_in_exec.error.code == "BAD_FLAG"
    assert isinstance(missing.error_in_exec, DshMagicError)
    assert missing.error_in_exec.error.code == "UNKNOWN_VARIABLE"
    assert "dsh [BAD_FLAG] unknown flag --bogus" in text and "dsh [UNKNOWN_VARIABLE]" in text
    assert "Traceback" not in text


def test_subcommands_sessions_show_config(shell: Any, isolated_dsh_home: Path) -> None:
    assert shell.run_cell("%dsh show").error_in_exec.error.code == "NO_SESSION"
    result = shell.run_cell("%dsh read README.md and summarise").result
    table = shell.run_cell("%dsh sessions").result
    assert isinstance(table, SessionTable) and len(table) == 1
    row = table.rows[0]
    assert row[0] == f"{result.session_id} *" and row[1].startswith("read README.md") and row[2] == "1"
    assert row[5] == "idle" and "<table" in table._repr_html_()
    shown = shell.run_cell("%dsh show --no-widget").result  # the view (a line not the last displays it too)
    assert isinstance(shown, EventListing)
    listing = repr(shown)
    assert listing.startswith(f"session {result.session_id} (")
    assert "tool/call" in listing and "turn 1 completed" in listing
    config = shell.run_cell("%dsh config").result
    assert isinstance(config, ConfigView)
    assert config.items["home"] == str(isolated_dsh_home) and config.items["API key"] == "not set"
    assert config.items["model"] == "script:auto" and result.session_id in config.items["session"]
    unknown = shell.run_cell("%dsh show s_nope").error_in_exec
    assert unknown.error.code == "UNKNOWN_SESSION" and "%dsh -- show s_nope" in unknown.error.message


def test_resume_after_a_host_restart_continues_the_session(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from dsh_notebook.host.host import Host

    first = shell.run_cell("%dsh hello").result
    Host.get().shutdown()  # as if the kernel restarted: only the log remains
    magics = magics_of(shell)
    magics.current_session = None
    shell.user_ns["sid"] = first.session_id
    assert shell.run_cell("%dsh resume {sid}").error_in_exec is None  # subcommand targets interpolate too
    assert "resumed from its log" in capsys.readouterr().out
    again = shell.run_cell("%dsh hello after resume").result
    assert again.session_id == first.session_id and again.turn == 2 and again.ok


def test_config_traitlets_and_env(shell: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("config", "DshMagics.model = 'script:help'")
    assert magics_of(shell).model == "script:help"
    result = shell.run_cell("%dsh what can you do?").result
    assert "no model configured" not in capsys.readouterr().out
    assert shell.run_cell("%dsh config").result.items["model"] == "script:help"
    assert "script:help" in magics_of(shell).sessions[result.session_id][0].model
    shell.run_line_magic("config", "DshMagics.model = None")
    monkeypatch.setenv("DSH_MODEL", "script:readme")
    monkeypatch.setenv("DSH_API_KEY", "sk-secret-value-0123456789")
    config = shell.run_cell("%dsh config").result
    assert config.items["model"] == "script:readme" and config.items["API key"] == "set"
    assert "sk-secret" not in repr(config) and "sk-secret" not in config._repr_html_()


def test_session_flag_and_creation_flags(shell: Any) -> None:
    first = shell.run_cell("%dsh hello").result
    other = shell.run_cell("%dsh --new hello").result
    back = shell.run_cell(f"%dsh --session {first.session_id} hello again").result
    assert back.session_id == first.session_id != other.session_id and back.turn == 2
    clash = shell.run_cell(f"%dsh --session {first.session_id} --model script:help hi").error_in_exec
    assert clash.error.code == "BAD_FLAG" and "--model" in clash.error.message
    switched = shell.run_cell("%dsh --model script:help hi").result  # a different model: a new session
    assert switched.session_id not in (first.session_id, other.session_id)


def test_a_failed_session_flag_does_not_replace_the_current_session(shell: Any) -> None:
    first = shell.run_cell("%dsh hello").result
    bad = shell.run_cell("%dsh --session s_000000000000 hi").error_in_exec
    assert isinstance(bad, DshMagicError) and bad.error.code == "UNKNOWN_SESSION"
    after = shell.run_cell("%dsh hello again").result  # still goes to the session that exists
    assert isinstance(after, TurnResult) and after.session_id == first.session_id and after.turn == 2
    assert magics_of(shell).current_session == first.session_id


def test_bg_returns_a_handle_that_waits(shell: Any) -> None:
    handle = shell.run_cell("%dsh --bg --no-widget read README.md and summarise").result
    assert isinstance(handle, CellTurn) and handle.session_id.startswith("s_")
    result = handle.wait(timeout=120)
    assert result.ok and handle.result is result and handle.done()
    assert "completed" in repr(handle)


def test_question_marks_end_prompts_not_help(shell: Any) -> None:
    result = shell.run_cell("%dsh what can you do?").result
    assert shell.run_cell("x = %dsh is 2+2 four ?").error_in_exec is None
    spaced = shell.user_ns["x"]
    assert isinstance(result, TurnResult) and isinstance(spaced, TurnResult)
    prompts = [next(e for e in r.events if isinstance(e, UserMessageEvent) and e.message.source.kind == "user")
               .message.content[0].text for r in (result, spaced)]
    assert prompts == ["what can you do?", "is 2+2 four ?"]


def test_home_traitlet_and_base_url_without_model(shell: Any, tmp_path: Path) -> None:
    home = tmp_path / "custom-home"
    shell.run_line_magic("config", f"DshMagics.home = {str(home)!r}")
    assert shell.run_cell("%dsh config").result.items["home"] == str(home)
    result = shell.run_cell("%dsh hello").result
    assert (home / "sessions" / f"{result.session_id}.jsonl").is_file()
    error = shell.run_cell("%dsh --new --base-url http://127.0.0.1:9/v1 hi").error_in_exec
    assert error.error.code == "BAD_FLAG" and "--model NAME" in error.error.message
    shell.run_line_magic("config", "DshMagics.home = None")


def test_blocking_prompt_behind_a_waiting_turn_asks_its_approval_and_interrupt_leaves_it_queued(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = shell.run_cell("%dsh --bg --no-widget --approve ask --cwd . run the tests; if they fail fix src/math.ts").result
    deadline = time.monotonic() + 30
    while not holder.approvals.waiting:  # the bash call waits for an approval nobody gave
        assert time.monotonic() < deadline, "no approval asked"
        time.sleep(0.02)
    asked: list[str] = []

    def interrupted_input(prompt: str = "") -> str:  # the user presses Interrupt at the prompt
        asked.append(prompt)
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupted_input)
    error = shell.run_cell("%dsh later").error_in_exec
    assert asked and "bash" in asked[0]  # the blocked cell asked for the background turn's approval
    assert isinstance(error, DshMagicError) and error.error.code == "INTERRUPTED"
    assert "stays queued" in error.error.message and not holder.done()
