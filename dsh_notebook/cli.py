"""``python -m dsh_notebook`` — the headless CLI (DESIGN §6).

Its commands and flags are declared once, with ``%dsh``'s, in the command registry
(:mod:`dsh_notebook.cmdline.table`); the parser is built from it (:func:`build_parser`) and each
command runs the handler the registry names. A handler takes the parsed namespace and returns the
exit code; a coded error (``DshError``) is ``error: [CODE] …`` with exit 2, Ctrl-C 130, a closed
pipe (``show … | head``) 141. The few handlers that choose between other handlers by flag, or do
something first, are here.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module
from typing import Any

from .cmdline.argparser import build_parser
from .cmdline.options import apply_process_flags
from .cmdline.spec import Command
from .errors import DshError

__all__ = ["build_parser", "main"]


def handler(cmd: Command) -> Any:
    """The function the registry names for ``cmd`` (its module imported now, not before)."""
    module, _, name = cmd.runs.partition(":")
    return getattr(import_module(module), name)


def main(argv: list[str] | None = None) -> int:
    from .cli_tty import guard_output

    given = sys.argv[1:] if argv is None else argv
    guard_output(given[0] if given else "")  # bidi and control characters printed visible (issue 35)
    args = build_parser().parse_args(argv)
    try:
        apply_process_flags(args)  # --context-window, --no-network: this process's
        return int(handler(args._command)(args))
    except DshError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `show ... | head`: the reader left; stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 141


def show_main(args: argparse.Namespace) -> int:
    """``show ID`` (events), ``--messages`` (the next request), ``--stats``, ``--search`` / ``--export``."""
    if args.stats:
        from .analysis.stats_view import stats_main

        return stats_main(args)
    if args.search is not None or args.export:
        from .observe.query_view import show_search_main

        return show_search_main(args)
    from .models.chat_format import to_openai_messages
    from .session.inspect import show_main as events_main

    return events_main(args, to_openai_messages)


def sessions_main(args: argparse.Namespace) -> int:
    """``sessions`` (the table), ``sessions --search TEXT``."""
    if args.search is not None:
        from .observe.search_view import search_main

        return search_main(args)
    from .session.inspect import sessions_main as table_main

    return table_main(args)


def fork_main(args: argparse.Namespace) -> int:
    from .session.fork import fork_main as fork_log_main
    from .tools.registry import is_read_only

    return fork_log_main(args, read_only=is_read_only)


def export_html_main(args: argparse.Namespace) -> int:
    from .observe.export_html import export_main
    from .session.inspect import refuse_overwriting_a_log

    refuse_overwriting_a_log(args.output)
    return export_main(args)


def checkpoints_main(args: argparse.Namespace) -> int:
    from .checkpoint.cli import checkpoints_main as listing_main
    from .launcher import hide_from_checkpoints

    hide_from_checkpoints()  # what the sandbox hides is never restored
    return listing_main(args)


def rewind_main(args: argparse.Namespace) -> int:
    from .checkpoint.cli import rewind_main as restore_main
    from .launcher import hide_from_checkpoints

    hide_from_checkpoints()  # what the sandbox hides is never restored
    return restore_main(args)


def schema_main(args: argparse.Namespace) -> int:
    from .wire.schema import schema_json

    sys.stdout.write(schema_json())
    return 0
