"""``python -m dsh_notebook`` — the headless CLI (DESIGN §6).

``run`` drives one turn through the Host; ``show`` prints a log's events or (``--messages``) the
repaired model messages of its next request; ``sessions`` lists saved sessions; ``serve --stdio``
speaks the wire envelopes on stdin/stdout; ``schema`` prints the wire's JSON Schema.
"""

from __future__ import annotations

import argparse
import os
import sys

from .errors import DshError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dsh_notebook", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one prompt to the end of its turn")
    run.add_argument("prompt", nargs="+", help="the prompt text")
    run.add_argument("--model", help="provider:model, e.g. script:auto, deepseek:deepseek-chat")
    run.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    run.add_argument("--cwd", help="workspace (default: a fresh copy of the demo workspace)")
    run.add_argument("--session", help="continue this session id")
    run.add_argument("--approve", choices=["auto", "deny"], default="auto")
    run.add_argument("--quiet", action="store_true", help="print only the final answer")

    show = sub.add_parser("show", help="print a session's events or its next request's messages")
    show.add_argument("target", help="session id or path to a .jsonl log")
    show.add_argument("--messages", action="store_true", help="repaired messages, OpenAI form")
    show.add_argument("--json", action="store_true", help="events as JSON lines")

    sub.add_parser("sessions", help="list saved sessions")

    sub.add_parser(
        "schema", help="print the JSON Schema (2020-12) of the wire: LogLine, ClientMessage, ServerMessage"
    )

    serve = sub.add_parser("serve", help="serve the host protocol")
    serve.add_argument("--stdio", action="store_true", required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "show":
            from .session.inspect import show_main

            return show_main(args)
        if args.command == "sessions":
            from .session.inspect import sessions_main

            return sessions_main(args)
        if args.command == "run":
            from .host.cli_run import run_main

            return run_main(args)
        if args.command == "schema":
            from .wire.schema import schema_json

            sys.stdout.write(schema_json())
            return 0
        if args.command == "serve":
            from .host.stdio import serve_main

            return serve_main(args)
    except DshError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `show ... | head`: the reader left; stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 141
    return 2
