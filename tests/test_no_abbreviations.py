"""No command line of this package accepts an abbreviated flag (issue 36 item 4): ``run --mode X``
was silently taken as ``--model X``. Every argparse parser the package builds — the CLI with
all its subcommands, ``mcp add``, the local model's worker, the demo launcher — is walked and
each of its long options is offered a prefix: none may resolve. The ``%dsh`` line parser
resolves exact names only. A source scan keeps new parsers honest."""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.errors import UserError
from tests.support.cli import cli_env, dsh
from tests.support.source import ONE_WORKER, parsed

PKG = Path(__file__).resolve().parents[1] / "dsh_notebook"


def _parsers(monkeypatch: pytest.MonkeyPatch) -> list[argparse.ArgumentParser]:
    """Every parser the package's command lines build (recorded as they are constructed)."""
    built: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.__init__

    def record(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", record)
    from dsh_notebook.cli import build_parser
    from dsh_notebook.demo.launch import main as launch_main
    from dsh_notebook.models.local_worker import main as worker_main
    from dsh_notebook.tools.mcp.listing import parse_add

    build_parser()
    parse_add(["name", "--url", "http://127.0.0.1:9/mcp"])
    for main in (worker_main, launch_main):
        with pytest.raises(SystemExit):
            main(["--help"])
    return built


def _walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _walk(sub)


def _resolves(parser: argparse.ArgumentParser, text: str) -> bool:
    """Whether argparse would take ``text`` (a prefix) as one of the parser's options."""
    found = parser._parse_optional(text)
    if found is None:
        return False
    first = found[0] if isinstance(found, list) else found  # Python >= 3.12 returns a list
    return first[0] is not None


def test_every_parser_refuses_every_abbreviation(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen, checked = set(), 0
    for top in _parsers(monkeypatch):
        for parser in _walk(top):
            if id(parser) in seen:
                continue
            seen.add(id(parser))
            assert parser.allow_abbrev is False, parser.prog
            for option in parser._option_string_actions:
                if not option.startswith("--") or len(option) < 4:
                    continue
                for cut in range(3, len(option)):
                    prefix = option[:cut]
                    if prefix in parser._option_string_actions:
                        continue  # an option of its own (--max-steps vs --max-steps-x)
                    assert not _resolves(parser, prefix), f"{parser.prog}: {prefix} resolves (to {option})"
                    checked += 1
    capsys.readouterr()
    assert len(seen) >= 20 and checked > 400  # the CLI's subcommands, mcp add, the worker, the launcher


@ONE_WORKER  # the package's files parsed once, in one worker
def test_no_parser_in_the_source_allows_abbreviations() -> None:
    """Any ``ArgumentParser(...)`` written in the package passes ``allow_abbrev=False`` (the
    CLI's own ``_Parser`` forces it for itself and its subparsers)."""
    missing = []
    for path in sorted(PKG.rglob("*.py")):
        if "demo/workspace" in path.as_posix():
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "ArgumentParser":
                given = {k.arg: k.value for k in node.keywords}
                value = given.get("allow_abbrev")
                if not (isinstance(value, ast.Constant) and value.value is False):
                    missing.append(f"{path.relative_to(PKG)}:{node.lineno}")
    assert missing == []


@pytest.mark.parametrize("argv", [
    ["run", "--mod", "script:auto", "hi"],  # --model
    ["run", "--mode", "script:auto", "hi"],  # once taken as --model: now a mode, and not one
    ["run", "--max-step", "3", "hi"],
    ["run", "--model=script:auto", "--appr", "auto", "hi"],
    ["show", "--stat", "s_x"],
    ["policy", "check", "s_x", "--rule", "r.json"],
    ["rewind", "s_x", "--to-t", "1"],
])
def test_the_cli_refuses_an_abbreviated_flag_before_anything_runs(argv: list[str], tmp_path: Path) -> None:
    done = dsh(*argv, env=cli_env(DSH_HOME=str(tmp_path / "home")))
    assert done.returncode == 2 and "[BAD_ARGS]" in done.stderr, done.stderr
    assert not (tmp_path / "home" / "sessions").exists() or not any((tmp_path / "home" / "sessions").iterdir())


def test_the_dsh_line_takes_exact_flag_names_only() -> None:
    from dsh_notebook.cmdline.dsh_line import parse_line

    assert parse_line("--mode plan hello").mode == "plan"
    for line in ("--mod plan hello", "--mode-x plan hi", "--appr auto hi", "--max-s 3 hi"):
        with pytest.raises(UserError) as err:
            parse_line(line)
        assert err.value.code == "BAD_FLAG", line
    with pytest.raises(UserError) as bad:
        parse_line("--mode acceptEdits hi")
    assert bad.value.code == "BAD_FLAG" and "accept-edits" in bad.value.message
