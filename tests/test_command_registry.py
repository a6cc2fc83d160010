"""The command registry's conformance (issue 40 item 3): every command and flag declared in
``dsh_notebook/cmdline/table.py`` exists on each surface it names — the CLI's argparse parser and
the ``%dsh`` line — and nowhere else; each has help, and the help texts show it; tab completion
offers it; and a flag both surfaces have means the same on both: the same line parsed by the CLI
and by ``%dsh`` gives the same checked values and the same session options.

The surfaces are the real ones: ``build_parser()`` (what ``python -m dsh_notebook`` runs),
``parse_line`` (what ``%dsh`` runs), ``help_text`` / ``command_help`` (``%dsh --help``), the
completion the kernels use.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from typing import Any

import pytest

from dsh_notebook.cli import build_parser
from dsh_notebook.cmdline.complete import offers
from dsh_notebook.cmdline.dsh_line import FLAGS, MagicArgs, flag_values, parse_line
from dsh_notebook.cmdline.help import command_help, help_text
from dsh_notebook.cmdline.options import checked_flags, session_options
from dsh_notebook.cmdline.spec import Command, Flag
from dsh_notebook.cmdline.table import COMMANDS, command, line_flags, on, reference
from dsh_notebook.errors import UserError

pytestmark = pytest.mark.unit


def _subparser(words: tuple[str, ...]) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = build_parser()
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def _value(flag: Flag) -> str:
    return flag.example or (flag.choices[0] if flag.choices else "x")


def _cli_line(cmd: Command, flag: Flag | None = None) -> list[str]:
    """A valid CLI line of ``cmd`` (its required args and flags filled in), with ``flag`` given."""
    line = list(cmd.words)
    for arg in cmd.args_on("cli"):
        if arg.nargs in (None, "+"):
            line.append("s_0123456789ab" if arg.values == "session" else "hi")
    for other in cmd.flags_on("cli"):
        if other.required and other is not flag:
            line += [other.name] + ([_value(other)] if other.takes_value else [])
    if flag is not None:
        line += [flag.name] + ([_value(flag)] if flag.takes_value else [])
    return line


# --- every command and flag where it is declared, and nowhere else --------------------------------


def test_the_registry_names_every_command_once_and_yields_them_all() -> None:
    names = [c.name for c in COMMANDS]
    assert len(names) == len(set(names)) and list(reference()) == list(COMMANDS)
    assert len(on("cli")) >= 16 and len(on("dsh")) >= 18  # the CLI's 16 commands, %dsh's subcommands
    for cmd in COMMANDS:
        dests = [f.dest for f in cmd.flags]
        assert len(dests) == len(set(dests)), f"{cmd.name}: a flag declared twice"
        assert cmd.surfaces, cmd.name
        assert not cmd.on("cli") or cmd.runs, f"{cmd.name}: a CLI command names its handler"


@pytest.mark.parametrize("cmd", on("cli"), ids=lambda c: c.name)
def test_every_cli_command_and_flag_is_in_the_cli_parser_exactly(cmd: Command) -> None:
    parser = _subparser(cmd.words)
    options = {a.dest: a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)}
    declared = {f.dest: f for f in cmd.flags_on("cli")}
    assert set(options) == set(declared), f"{cmd.name}: the parser and the registry differ"
    for dest, flag in declared.items():
        action = options[dest]
        assert flag.name in action.option_strings and (not flag.short or flag.short in action.option_strings)
        assert action.help == flag.help and action.required == flag.required
        assert (action.nargs != 0) == flag.takes_value, flag.name  # a switch takes no value
        assert tuple(action.choices or ()) == flag.choices, flag.name
    positionals = [a.dest for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]
    assert positionals == [a.name for a in cmd.args_on("cli")]
    parsed = parser.parse_args(_cli_line(cmd)[len(cmd.words):])
    assert parsed._command is cmd  # what main() runs


def test_the_cli_has_no_command_the_registry_does_not_declare() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    heads = {c.words[0] for c in on("cli")}
    assert set(sub.choices) == heads


def test_every_cli_handler_is_a_function_of_the_package() -> None:
    from dsh_notebook.cli import handler

    for cmd in on("cli"):
        assert callable(handler(cmd)), cmd.runs


def test_the_dsh_line_holds_every_flag_it_takes() -> None:
    fields = {f.name for f in dataclasses.fields(MagicArgs)}
    assert {f.dest for f in FLAGS} <= fields
    assert FLAGS == line_flags() and all("dsh" in f.surfaces for f in FLAGS)


@pytest.mark.parametrize("flag", [f for f in line_flags() if f.name != "--help"], ids=lambda f: f.name)
def test_every_line_flag_is_taken_by_the_dsh_line(flag: Flag) -> None:
    if flag.name in ("--stats", "--inspect", "--present"):
        line = f"{flag.name} show"  # show's own, allowed to lead the line
    else:
        line = f"{flag.name} {shlex.quote(_value(flag))} hello" if flag.takes_value else f"{flag.name} hello"
    args = parse_line(line)
    assert flag.dest in flag_values(args), line


@pytest.mark.parametrize("cmd", [c for c in on("dsh") if not c.dsh_prompt], ids=lambda c: c.name)
def test_every_dsh_subcommand_and_its_flags_parse(cmd: Command) -> None:
    required = " ".join(f"{f.name} {_value(f)}" for f in cmd.flags_on("dsh") if f.required)
    compare = " s_aaaaaaaaaaaa s_bbbbbbbbbbbb" if cmd.name == "compare" else ""
    args = parse_line(f"{cmd.name}{compare} {required}".strip())
    assert args.command == cmd.name
    for flag in cmd.flags_on("dsh"):
        if flag.required:
            continue
        given = f"{flag.name} {shlex.quote(_value(flag))}" if flag.takes_value else flag.name
        if flag in line_flags() and flag.takes_value:
            given = f"{flag.name}={_value(flag)}"  # a line flag after a subcommand takes =VALUE
        parsed = parse_line(f"{cmd.name}{compare} {required} {given}".strip())
        assert parsed.command == cmd.name and flag.dest in flag_values(parsed), (cmd.name, flag.name)
    assert parse_line(f"{cmd.name} --help").help, cmd.name


# --- help --------------------------------------------------------------------------------------------


def test_every_command_flag_and_word_has_help() -> None:
    for cmd in COMMANDS:
        assert cmd.help.strip(), cmd.name
        assert all(a.help.strip() for a in cmd.args), cmd.name
        assert all(f.help.strip() for f in cmd.flags), cmd.name
        if cmd.on("dsh") and not cmd.dsh_prompt and cmd.name != "help":
            assert cmd.dsh_lines and cmd.dsh_usage, f"{cmd.name}: %dsh --help lists it, an error quotes its usage"


def test_the_dsh_help_shows_every_line_flag_and_subcommand() -> None:
    text = help_text()
    for flag in line_flags():
        assert flag.name in text and flag.help_on("dsh") in text, flag.name
    for cmd in on("dsh"):
        for usage, what in cmd.dsh_lines:
            assert f"%dsh {usage}" in text and what in text, cmd.name


@pytest.mark.parametrize("cmd", [c for c in on("dsh") if not c.dsh_prompt], ids=lambda c: c.name)
def test_each_dsh_command_has_its_own_help(cmd: Command) -> None:
    text = command_help(cmd.name)
    assert cmd.dsh_usage in text if cmd.dsh_usage else cmd.name in text
    for flag in cmd.flags_on("dsh"):
        assert flag.name in text, (cmd.name, flag.name)


@pytest.mark.parametrize("cmd", on("cli"), ids=lambda c: c.name)
def test_the_cli_help_shows_every_flag(cmd: Command, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # one line per flag: no word split at a hyphen
    text = " ".join(_subparser(cmd.words).format_help().split())
    for flag in cmd.flags_on("cli"):
        assert flag.name in text and " ".join(flag.help.split()).replace("%%", "%") in text.replace("%%", "%"), flag.name


# --- completion ---------------------------------------------------------------------------------


def test_completion_offers_every_subcommand_and_line_flag() -> None:
    start = offers([], "") or []
    for cmd in on("dsh"):
        if not cmd.dsh_prompt:
            assert cmd.words[0] in start, cmd.name
    for flag in line_flags():
        assert flag.name in start and flag.name in (offers([], "-") or []), flag.name
        for choice in flag.choices:
            assert choice in (offers([flag.name], "") or []), (flag.name, choice)
    assert "check" in (offers(["policy"], "") or [])  # policy check


@pytest.mark.parametrize("cmd", [c for c in on("dsh") if not c.dsh_prompt], ids=lambda c: c.name)
def test_completion_offers_each_subcommands_flags_and_words(cmd: Command) -> None:
    sessions = ["s_0123456789ab"]
    own = offers(list(cmd.words), "-", lambda: sessions) or []
    for flag in cmd.flags_on("dsh"):
        assert flag.name in own, (cmd.name, flag.name)
        for choice in flag.choices:
            assert choice in (offers([*cmd.words, flag.name], "", lambda: sessions) or []), (cmd.name, choice)
    first = cmd.args_on("dsh")[:1]
    if first and (first[0].choices or first[0].values == "session"):
        expected = list(first[0].choices) or sessions
        assert set(expected) <= set(offers(list(cmd.words), "", lambda: sessions) or []), cmd.name


# --- one meaning on both surfaces ---------------------------------------------------------------


SHARED_RUN_FLAGS = [f for f in command("run").flags if f.surfaces == {"cli", "dsh"}]


@pytest.mark.parametrize("flag", SHARED_RUN_FLAGS, ids=lambda f: f.name)
def test_the_cli_and_dsh_parse_a_shared_run_flag_to_the_same_options(flag: Flag, tmp_path: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # --rules resolves against here, on both surfaces
    words = [flag.name] + ([_value(flag)] if flag.takes_value else [])
    cli = build_parser().parse_args(["run", *words, "hello"])
    dsh = parse_line(" ".join([flag.name, *(shlex.quote(w) for w in words[1:])]) + " hello")
    cli_values = checked_flags(cli, "run", "cli")
    dsh_values = {k: v for k, v in checked_flags(dsh, "run", "dsh").items() if k in cli_values}
    assert cli_values == dsh_values and flag.dest in cli_values
    assert session_options(cli) == session_options(dsh)
    assert flag.dest in flag_values(dsh)


def test_a_line_of_every_shared_run_flag_means_the_same_on_both_surfaces(tmp_path: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    chosen = [f for f in SHARED_RUN_FLAGS if f.name not in ("--session", "--cwd")]  # --demo excludes them
    words = [w for f in chosen for w in ([f.name, _value(f)] if f.takes_value else [f.name])]
    words += ["--option", "seed=7"]  # repeated
    cli = build_parser().parse_args(["run", *words, "hello"])
    dsh = parse_line(" ".join(shlex.quote(w) for w in words) + " hello")
    assert checked_flags(cli, "run", "cli") == checked_flags(dsh, "run", "dsh")
    options = session_options(cli)
    assert options == session_options(dsh)
    assert options["options"] == {"temperature": 0.2, "seed": 7} and options["rules"] == str(tmp_path / "rules.json")


SUBCOMMAND_LINES = [
    ("fork", ["s_0123456789ab", "--at", "12"]),
    ("policy check", ["s_0123456789ab", "--rules", "r.json", "--mode", "auto"]),
    ("rewind", ["s_0123456789ab", "--to-turn", "2", "--files", "--dry-run", "--force"]),
    ("checkpoints", ["s_0123456789ab", "--diff", "3"]),
    ("sessions", ["--search", "divide"]),
    ("show", ["s_0123456789ab", "--stats"]),
]


@pytest.mark.parametrize(("name", "words"), SUBCOMMAND_LINES, ids=[n for n, _ in SUBCOMMAND_LINES])
def test_a_subcommand_line_means_the_same_on_both_surfaces(name: str, words: list[str]) -> None:
    cmd = command(name)
    cli = build_parser().parse_args([*cmd.words, *words])
    dsh = parse_line(" ".join([*cmd.words, *words]))
    assert dsh.command == name and (dsh.target or dsh.session or dsh.search) in (getattr(cli, "target", None), "divide")
    shared = [f for f in cmd.flags if f.surfaces == {"cli", "dsh"}]
    given = flag_values(dsh)
    for flag in shared:
        if flag.dest in given or getattr(cli, flag.dest, None) not in (None, False):
            assert flag.checked(getattr(cli, flag.dest)) == flag.checked(given.get(flag.dest)), (name, flag.name)


def test_a_value_out_of_bounds_is_refused_by_both_surfaces_naming_the_flag() -> None:
    """The checks are one: each end of a flag's bounds is taken, a value past them refused, with the
    same code from the CLI's run and from the ``%dsh`` line — except where the CLI converts while
    parsing (``--context-window``): argparse refuses it first, ``[BAD_ARGS]``, exit 2."""
    checked = 0
    for flag in SHARED_RUN_FLAGS:
        if flag.bounds is None or flag.check is None:
            continue
        low, high = flag.bounds
        for good in (low + 0.5 if flag.above_low else low, high):
            text = str(int(good)) if float(good).is_integer() else str(good)
            assert flag.checked(text) == flag.checked(build_parser().parse_args(["run", flag.name, text, "hi"]).__dict__[flag.dest])
        if flag.above_low:
            with pytest.raises(UserError):
                flag.checked(str(int(low)))
        too_big = str(int(high) * 10 + 1)
        with pytest.raises(UserError) as by_dsh:
            checked_flags(parse_line(f"{flag.name} {too_big} hi"), "run", "dsh")
        assert flag.name in by_dsh.value.message
        if flag.type not in (None, int, float):  # converted by the CLI's parser
            with pytest.raises(SystemExit) as exited:
                build_parser().parse_args(["run", flag.name, too_big, "hi"])
            assert exited.value.code == 2
        else:
            with pytest.raises(UserError) as by_cli:
                checked_flags(build_parser().parse_args(["run", flag.name, too_big, "hi"]), "run", "cli")
            assert by_cli.value.code == by_dsh.value.code, flag.name
        checked += 1
    assert checked >= 7  # --context-window, --max-steps, --max-time, --max-tokens, --max-repeats, the timeouts
