"""The CLI's argparse parser, built from the command registry (:mod:`.table`).

Every parser of it takes no flag by a prefix (``allow_abbrev=False``, subcommands too: ``run
--mode X`` once silently meant ``--model X``) and reports a bad flag or value as ``[BAD_ARGS] …``
with exit 2. A command of several words (``policy check``) is a subcommand of a subcommand; the
parsed namespace carries its :class:`~.spec.Command` as ``_command``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ..errors import UserError
from .spec import Command, Flag
from .table import GROUPS, on

PROG = "python -m dsh_notebook"
DESCRIPTION = (
    "The headless CLI of dsh_notebook (DESIGN §6): the same host as the notebook, no kernel. Every command "
    "and flag is declared once in dsh_notebook/cmdline/table.py, shared with %dsh."
)


class _Parser(argparse.ArgumentParser):
    """argparse with the product's coded errors: a bad flag or value is ``[BAD_ARGS] …``, exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False  # every parser of this package, subparsers included
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        self._given = list(sys.argv[1:] if args is None else args)  # what error() may name
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("the following arguments are required"):  # `run --bogus`: name the flag
            unknown = self._unknown_flags()
            message = f"unrecognized arguments: {' '.join(unknown)}" if unknown else message
        self.print_usage(sys.stderr)
        self.exit(2, f"error: [BAD_ARGS] {self.prog}: {message}\n")

    def _unknown_flags(self) -> list[str]:
        known = list(self._option_string_actions)
        unknown = []
        for token in getattr(self, "_given", []):
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if not name.startswith("-") or name == "-" or name.lstrip("-").replace(".", "").isdigit():
                continue
            if name not in known:
                unknown.append(token)
        return unknown


def _converter(flag: Flag) -> Callable[[str], Any] | None:
    """The flag's ``type`` as argparse calls it: a coded error becomes argparse's own message
    (exit 2), and argparse still names ``int`` / ``float`` when a number is not one."""
    kind = flag.type
    if kind is None:
        return None

    def convert(raw: str) -> Any:
        try:
            return kind(raw)
        except UserError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    convert.__name__ = getattr(kind, "__name__", "value")
    return convert


def add_flag(parser: Any, flag: Flag) -> None:
    names = [n for n in (flag.short, flag.name) if n]
    kwargs: dict[str, Any] = {"dest": flag.dest, "help": flag.help_on("cli")}
    if not flag.takes_value:
        kwargs["action"] = "store_true"
    else:
        kwargs["metavar"] = flag.metavar
        kwargs["default"] = flag.default
        if flag.repeat:
            kwargs["action"] = "append"
        if flag.choices:
            kwargs["choices"] = flag.choices
        if flag.type is not None:
            kwargs.update(type=_converter(flag))
    if flag.required:
        kwargs["required"] = True
    parser.add_argument(*names, **kwargs)


def _fill(parser: argparse.ArgumentParser, cmd: Command) -> None:
    for arg in cmd.args_on("cli"):
        kwargs: dict[str, Any] = {"help": arg.help}
        if arg.nargs is not None:
            kwargs["nargs"] = argparse.REMAINDER if arg.nargs == "..." else arg.nargs
        if arg.choices:
            kwargs["choices"] = arg.choices
        if arg.default is not None:
            kwargs["default"] = arg.default
        parser.add_argument(arg.name, **kwargs)
    groups: dict[str, Any] = {}
    for flag in cmd.flags_on("cli"):
        target: Any = parser
        if flag.group:
            if flag.group not in groups:
                groups[flag.group] = parser.add_mutually_exclusive_group()
            target = groups[flag.group]
        add_flag(target, flag)
    parser.set_defaults(_command=cmd)


def build_parser() -> argparse.ArgumentParser:
    """``python -m dsh_notebook``'s parser: one subcommand per CLI command of the registry."""
    parser = _Parser(prog=PROG, description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    nested: dict[str, Any] = {}  # "policy" → the subparsers of `policy …`
    for cmd in on("cli"):
        head, *rest = cmd.words
        if not rest:
            _fill(sub.add_parser(head, help=cmd.help, description=cmd.description or None), cmd)
            continue
        if head not in nested:
            group = sub.add_parser(head, help=GROUPS.get(head, f"the {head} commands"))
            nested[head] = group.add_subparsers(dest=f"{head}_command", required=True)
        _fill(nested[head].add_parser(rest[0], help=cmd.help, description=cmd.description or None), cmd)
    return parser
