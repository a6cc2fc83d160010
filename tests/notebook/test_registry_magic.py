"""Where ``%dsh`` and the CLI disagreed before the command registry (issue 40 item 3), they agree
now, in a real shell and a real ``python -m dsh_notebook``:

- ``%dsh --no-network`` (the CLI's ``run --no-network``) turns the sandbox's network off;
- ``%dsh policy check`` and ``%dsh checkpoints`` print what the CLI prints for the same log (they
  were prompts sent to the model);
- ``run --break-tools ,`` is refused as ``%dsh`` refuses it (it meant every tool), and the
  debugger's flags are checked before a session is made;
- ``%dsh COMMAND --help`` prints that command's help; Tab offers every subcommand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.cmdline.table import on
from dsh_notebook.notebook.magic.checkpoints import DiffView
from dsh_notebook.notebook.magic.magics import DshMagicError
from tests.support.cli import dsh

from .conftest import settled_log


@pytest.mark.integration  # the doctor probes the sandbox
def test_no_network_on_a_dsh_line_turns_the_sandbox_network_off(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from dsh_notebook.tools import confine

    try:
        assert confine.network_enabled()
        result = shell.run_cell("%dsh --no-network hello").result
        assert result.ok and not confine.network_enabled()
        shown = repr(shell.run_cell("%dsh doctor").result)
        assert "network" in shown and "off" in shown.split("network", 1)[1].split("\n", 1)[0], shown
    finally:
        confine.configure(network=None)


@pytest.mark.integration
def test_policy_check_and_checkpoints_print_what_the_cli_prints(shell: Any, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    result = shell.run_cell("%dsh run the tests; if they fail fix src/math.ts").result
    assert result.ok and len(result.tool_calls) == 4
    log = settled_log(shell, result.session_id)
    rules = tmp_path / "rules.json"
    rules.write_text('[{"tool": "bash", "pattern": "node *", "action": "deny"}]')
    capsys.readouterr()

    shell.run_cell(f"%dsh policy check --rules {rules} --mode accept-edits")
    in_cell = capsys.readouterr().out.splitlines()
    by_cli = dsh("policy", "check", log, "--rules", str(rules), "--mode", "accept-edits")
    assert by_cli.returncode == 0, by_cli.stderr
    assert in_cell == by_cli.stdout.splitlines() and len(in_cell) == 4
    assert any(" bash deny rules.json#1" in line for line in in_cell), in_cell

    shell.run_cell(f"%dsh policy check {result.session_id}")  # the rules alone, the session named
    assert capsys.readouterr().out.splitlines() == dsh("policy", "check", log).stdout.splitlines()

    shell.run_cell("%dsh checkpoints")
    listing = capsys.readouterr().out
    by_cli = dsh("checkpoints", log)
    assert by_cli.returncode == 0 and listing.splitlines() == by_cli.stdout.splitlines()
    assert "src/math.ts" in listing
    diff = shell.run_cell("%dsh checkpoints --diff 1").result
    assert isinstance(diff, DiffView) and "+  return a - b;" in repr(diff)  # the cell's value
    with pytest.raises(DshMagicError, match="not a turn"):
        shell.run_cell("%dsh checkpoints --diff=x").raise_error()


def test_policy_check_of_a_bad_mode_is_a_usage_error_not_a_prompt(shell: Any) -> None:
    bad = shell.run_cell("%dsh policy check --mode sideways").error_in_exec
    assert isinstance(bad, DshMagicError) and bad.error.code == "BAD_FLAG" and "accept-edits" in bad.error.message
    no_session = shell.run_cell("%dsh policy check").error_in_exec
    assert isinstance(no_session, DshMagicError) and no_session.error.code == "NO_SESSION"


def test_every_subcommand_has_its_help_on_the_line(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in on("dsh"):
        if cmd.dsh_prompt or cmd.name == "help":  # `%dsh help --help` is the whole help
            continue
        capsys.readouterr()
        assert shell.run_cell(f"%dsh {cmd.name} --help").error_in_exec is None, cmd.name
        out = capsys.readouterr().out
        assert out.startswith("usage: ") and all(f.name in out for f in cmd.flags_on("dsh")), (cmd.name, out)
    assert "--inspect" in capsys.readouterr().out or "--inspect" in _help_of("show")


def _help_of(name: str) -> str:
    from dsh_notebook.cmdline.help import command_help

    return command_help(name)


def test_completion_in_the_shell_offers_every_subcommand(shell: Any) -> None:
    def matches(text: str) -> list[str]:
        from IPython.core.completer import provisionalcompleter

        with provisionalcompleter():
            return [c.text for c in shell.Completer.completions(text, len(text))]

    for cmd in on("dsh"):
        if not cmd.dsh_prompt:
            assert cmd.words[0] in matches(f"%dsh {cmd.words[0][:2]}"), cmd.name
    assert "check" in matches("%dsh policy ")
    assert "--rules" in matches("%dsh policy check --r")
    assert matches("%dsh --approve ") == ["ask", "auto", "deny"]


@pytest.mark.integration  # python -m dsh_notebook
@pytest.mark.parametrize(("flags", "needs"), [
    (["--break", "03", "--break-tools", ","], "names no tool"),
    (["--break-tools", "bash"], "--break-tools needs --break"),
    (["--break-when", "name==bash"], "--break-when needs --break"),
])
def test_run_refuses_the_debuggers_flags_as_dsh_does_before_a_session(flags: list[str], needs: str,
                                                                       shell: Any, isolated_dsh_home: Path) -> None:
    done = dsh("run", *flags, "hello")
    assert done.returncode == 2 and "[BAD_FLAG]" in done.stderr and needs in done.stderr, done.stderr
    sessions = isolated_dsh_home / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir())  # refused before a session was made
    in_cell = shell.run_cell("%dsh " + " ".join(f"'{w}'" if w == "," else w for w in flags) + " hello").error_in_exec
    assert isinstance(in_cell, DshMagicError) and in_cell.error.code == "BAD_FLAG" and needs in in_cell.error.message
