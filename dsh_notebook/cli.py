"""``python -m dsh_notebook`` — the headless CLI (DESIGN §6).

``run`` drives one turn through the Host; ``show`` prints a log's events or (``--messages``) the
repaired model messages of its next request; ``sessions`` lists saved sessions; ``compact ID``
summarises a session's older turns; ``policy check ID_OR_PATH [--rules FILE]`` prints the verdict
of the approval rules for every tool call of a saved session; ``serve --stdio`` speaks the wire
envelopes on stdin/stdout.
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
    run.add_argument("--max-steps", type=int, metavar="N",
                     help="model requests per turn before it ends with reason budget (default DSH_MAX_STEPS or 50; 0: no limit)")
    run.add_argument("--max-time", type=float, metavar="SECONDS",
                     help="seconds per turn before it ends with reason budget (default DSH_MAX_TIME, else none)")
    run.add_argument("--rules", metavar="FILE", help="approval rules, a JSON list of {tool, pattern, action} (default DSH_POLICY_FILE)")

    show = sub.add_parser("show", help="print a session's events or its next request's messages")
    show.add_argument("target", help="session id or path to a .jsonl log")
    show.add_argument("--messages", action="store_true", help="repaired messages, OpenAI form")
    show.add_argument("--json", action="store_true", help="events as JSON lines")

    sub.add_parser("sessions", help="list saved sessions")

    compact = sub.add_parser("compact", help="summarise a saved session's older turns into one message now")
    compact.add_argument("session", help="session id")
    compact.add_argument("--model", help="the model that writes the summary (default: the session's)")
    compact.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the session's)")

    policy = sub.add_parser("policy", help="approval policies")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    check = policy_sub.add_parser("check", help="dry run: the verdict of the rules for every tool call of a saved session")
    check.add_argument("target", help="session id or path to a .jsonl log")
    check.add_argument("--rules", metavar="FILE", help="a JSON rules file (default DSH_POLICY_FILE)")

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
        if args.command == "compact":
            from .host.cli_run import compact_main

            return compact_main(args)
        if args.command == "policy":
            from .tools.policy_check import check_main

            return check_main(args)
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
