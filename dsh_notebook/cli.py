"""``python -m dsh_notebook`` — the headless CLI (DESIGN §6).

``run`` drives one turn through the Host; ``show`` prints a log's events or (``--messages``) the
repaired model messages of its next request, or (``--stats``) its timings, tokens and cost;
``sessions`` lists saved sessions (``--search TEXT`` searches them); ``export-otel`` sends a saved
session to an OTLP endpoint; ``export-html ID -o FILE.html`` writes a page replaying it with no
kernel; ``serve --stdio`` speaks the wire envelopes on stdin/stdout;
``mcp list|add|remove`` shows and edits the MCP servers; ``install-kernel`` installs the agent
kernel ``dsh``; ``doctor`` prints which protections are active here;
``compact ID`` summarises a session's older turns; ``policy check ID_OR_PATH [--rules FILE]``
prints the verdict of the approval rules for every tool call of a saved session; ``schema`` prints the wire's JSON Schema;
``checkpoints ID`` lists a session's turns with their file changes; ``rewind ID --to-turn N`` puts the
workspace (``--files``), the conversation (``--conversation``, a fork) back as at the start of turn N.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn, get_args

from .config import positive_int
from .errors import DshError, UserError
from .wire.events import ChosenMode

MODES: tuple[str, ...] = get_args(ChosenMode)  # default, accept-edits, plan, dont-ask, bypass


class _Parser(argparse.ArgumentParser):
    """argparse with the product's coded errors: a bad flag or value is ``[BAD_ARGS] …``, exit 2.
    No flag is ever taken by a prefix (``allow_abbrev=False``, subcommands too): ``run --mode X``
    once silently meant ``--model X``."""

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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m dsh_notebook", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="run one prompt to the end of its turn",
        description="Run one prompt to the end of its turn. The streamed text and tool lines go to stderr "
                    "(unless --quiet or --json); the final answer, then 'session: <id> log: <path>', to "
                    "stdout. At a terminal (stdout and stderr both TTYs) the answer is shown once, by the "
                    "stream; piped or redirected, stdout always carries it. Exit 0 when the turn "
                    "completed, 1 otherwise, 2 on a bad flag, 130 on Ctrl-C.")
    run.add_argument("prompt", nargs="+", help="the prompt text")
    run.add_argument("--model", help="provider:model, e.g. script:auto, deepseek:deepseek-chat")
    run.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    run.add_argument("--cwd", help="workspace (default: a fresh copy of the demo workspace for the scripted model "
                                   "script:*, else the current directory)")
    run.add_argument("--demo", action="store_true",
                     help="work on a fresh copy of the demo workspace, whatever the model (approvals auto there)")
    run.add_argument("--session", help="continue this session id")
    run.add_argument("--mode", choices=MODES, default=None,
                     help="the permission mode: default (reads run; edits, bash, python ask on the terminal), "
                          "accept-edits (workspace edits run too), plan (only reads; the plan is approved before "
                          "any work), dont-ask (what would ask is denied: CI), bypass (everything runs but deny "
                          "rules; needs DSH_ALLOW_BYPASS=1). Default: auto in a demo copy, else default")
    run.add_argument("--approve", choices=["auto", "ask", "deny"], default=None,
                     help="legacy spelling of --mode: ask = default, deny = dont-ask, auto = everything runs "
                          "but notebook cells (the demo copy's default)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress on stderr: only the final answer and the session line on stdout")
    run.add_argument("--json", action="store_true",
                     help="print one JSON object on stdout (sessionId, logPath, turn, completed, reason, "
                          "answer) and no progress")
    run.add_argument("--context-window", type=_window, metavar="N", help="context window in tokens (default: the model's)")
    run.add_argument("--no-network", action="store_true",
                     help="no network for sandboxed tool commands (same as DSH_SANDBOX_NETWORK=0)")
    run.add_argument("--max-steps", type=int, metavar="N",
                     help="model requests per turn before it ends with reason budget (default DSH_MAX_STEPS or 50; 0: no limit)")
    run.add_argument("--max-time", type=float, metavar="SECONDS",
                     help="seconds per turn before it ends with reason budget (default DSH_MAX_TIME, else none)")
    run.add_argument("--rules", metavar="FILE", help="approval rules, a JSON list of {tool, pattern, action} (default DSH_POLICY_FILE)")
    run.add_argument("--max-tokens", metavar="N",
                     help="output limit of every model request (default DSH_MAX_TOKENS, else derived from the window); "
                          "a reply cut by it ends the turn with reason max-tokens")
    run.add_argument("--option", action="append", metavar="KEY=VALUE", default=None,
                     help="a request option sent with every request, the value as JSON else a string "
                          "(repeatable: --option temperature=0.2 --option seed=7; any provider extra, e.g. top_k=40)")
    run.add_argument("--tools", metavar="NAMES",
                     help="the tools offered to the model: a comma list (read,grep), none (a plain chat turn) or all (default)")
    run.add_argument("--max-repeats", metavar="N",
                     help="the same tool call answered the same way (same result, denial or error) tolerated this many times in a row before "
                          "the turn ends stuck (default 2; 0: no guard)")
    run.add_argument("--break", dest="breakpoints", metavar="STAGES",
                     help="the agent debugger: pause at these stages (01-06, e.g. 03,06, or all) and ask on the "
                          "terminal c continue / s step / r run to / p print / e edit / q cancel (without a terminal: continued)")
    run.add_argument("--break-tools", metavar="NAMES", help="with --break: only calls of these tools (bash,edit)")
    run.add_argument("--break-when", metavar="EXPR",
                     help="with --break: only calls this condition holds for, e.g. 'name==bash and command~\"rm \"' "
                          "(name, args or an argument; == != ~ !~; and or not; parentheses)")
    run.add_argument("--run-to", metavar="'N cK'",
                     help="the agent debugger: pause once at stage N of the turn's K-th tool call (or a call id), "
                          "e.g. '05 c3' or 'stage 5 of c3' (with or without --break); at a pause r asks for another",)
    run.add_argument("--first-byte-timeout", metavar="SECONDS",
                     help="seconds a model request waits for the server's first chunk (default DSH_FIRST_BYTE_TIMEOUT, "
                          "else DSH_TIMEOUT, else 600 for a loopback server, else 120); fails MODEL_TIMEOUT")
    run.add_argument("--idle-timeout", metavar="SECONDS",
                     help="seconds between two chunks of a reply still arriving (default DSH_IDLE_TIMEOUT, else "
                          "DSH_TIMEOUT or 120); fails MODEL_TIMEOUT, never retried once something arrived")

    show = sub.add_parser("show", help="print a session's events or its next request's messages")
    show.add_argument("target", help="session id or path to a .jsonl log")
    show.add_argument("--messages", action="store_true", help="repaired messages, OpenAI form")
    show.add_argument("--json", action="store_true", help="events as JSON lines (with --stats: one JSON object)")
    show.add_argument("--stats", action="store_true", help="timings, tokens, cost and context per request, tool, turn")
    show.add_argument("--context-window", type=_window, metavar="N", help="with --stats: the context window in tokens")
    show.add_argument("--search", metavar="QUERY",
                      help='only the events matching QUERY: field terms type:tool/result name:bash exit:1 (exit:!0) '
                           'turn:3 seq:10..20 and free text ("a phrase" or words), all must match')
    show.add_argument("--export", choices=("jsonl", "csv"),
                      help="with --search: write the matching events as JSON lines or CSV (seq,time,turn,type,name,exit,snippet)")

    sessions = sub.add_parser("sessions", help="list saved sessions (or search them)")
    sessions.add_argument("--search", metavar="TEXT", help="sessions and events whose text matches")
    sessions.add_argument("--limit", type=int, default=50, help="with --search: at most this many events")
    sessions.add_argument("--json", action="store_true", help="with --search: one JSON object")

    sub.add_parser("doctor", help="print which protections (sandbox, redaction, locks …) are active here")

    otel = sub.add_parser("export-otel", help="send a saved session to the OTLP endpoint as traces")
    otel.add_argument("target", help="session id or path to a .jsonl log")
    otel.add_argument("--endpoint", help="OTLP/HTTP endpoint (default: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT)")
    page = sub.add_parser("export-html", help="one self-contained HTML page replaying a session (no kernel, no network)")
    page.add_argument("target", help="session id or path to a .jsonl log")
    page.add_argument("-o", "--output", required=True, metavar="FILE.html", help="the page to write")
    page.add_argument("--theme", choices=("light", "dark"), default="light", help="the page's colours (default light)")

    from .tools.mcp.listing import add_cli_parser

    add_cli_parser(sub)

    compact = sub.add_parser("compact", help="summarise a saved session's older turns into one message now")
    compact.add_argument("session", help="session id")
    compact.add_argument("--model", help="the model that writes the summary (default: the session's)")
    compact.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the session's)")

    policy = sub.add_parser("policy", help="approval policies")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    check = policy_sub.add_parser("check", help="dry run: the verdict of the rules for every tool call of a saved session")
    check.add_argument("target", help="session id or path to a .jsonl log")
    check.add_argument("--rules", metavar="FILE", help="a JSON rules file (default DSH_POLICY_FILE)")
    check.add_argument("--mode", choices=(*MODES, "auto"),
                       help="what this permission mode would have decided for each call (rules and grants of the "
                            "log included); without it, the rules alone")

    fork = sub.add_parser("fork", help="a new session repeating events 0..SEQ of a saved one")
    fork.add_argument("target", help="session id or path to a .jsonl log")
    fork.add_argument("--at", type=int, required=True, metavar="SEQ", help="the last event to keep")

    ckpts = sub.add_parser("checkpoints", help="a session's turns with their checkpoints and file changes (+a ~m -d)")
    ckpts.add_argument("target", help="session id or path to a .jsonl log")
    ckpts.add_argument("--diff", type=int, metavar="TURN", help="the turn's changed files as unified diffs")
    ckpts.add_argument("--json", action="store_true", help="one JSON object")
    rewind = sub.add_parser(
        "rewind", help="put the workspace (and/or conversation) back as at the start of a turn",
        description="Restore the workspace byte for byte as at the start of turn N (files created since are "
                    "removed) and/or fork the conversation before it. Exit 0: done; 1: conflicts left alone "
                    "(files changed outside the agent; --force overwrites); 2: an error (SESSION_BUSY while a "
                    "process runs the session, CHECKPOINT_BLOB_MISSING naming the files not restored).")
    rewind.add_argument("target", help="session id or path to a .jsonl log")
    rewind.add_argument("--to-turn", type=int, required=True, metavar="N", help="the turn whose start to go back to")
    rewind.add_argument("--files", action="store_true", help="restore the workspace's files (the default)")
    rewind.add_argument("--conversation", action="store_true",
                        help="fork the conversation before turn N: a new session (prints session: ID log: PATH)")
    rewind.add_argument("--variables", action="store_true", help="notebook variables (only in a live kernel: %%dsh rewind)")
    rewind.add_argument("--dry-run", action="store_true", help="say what would change; change nothing")
    rewind.add_argument("--force", action="store_true", help="overwrite files changed outside the agent (conflicts)")

    compare = sub.add_parser("compare", help="align two sessions by turn and step; first divergence")
    compare.add_argument("a", help="session id or log path")
    compare.add_argument("b", help="session id or log path")
    compare.add_argument("--json", action="store_true", help="one JSON object")
    sub.add_parser(
        "schema", help="print the JSON Schema (2020-12) of the wire: LogLine, ClientMessage, ServerMessage"
    )

    serve = sub.add_parser("serve", help="serve the host protocol")
    serve.add_argument("--stdio", action="store_true", required=True)
    serve.add_argument("--no-network", action="store_true", help="no network for sandboxed tool commands")

    kernel = sub.add_parser("install-kernel", help='install the Jupyter kernelspec "dsh" (Agent (dsh))')
    where = kernel.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="into the user's Jupyter data directory")
    where.add_argument("--sys-prefix", action="store_true", help="into this environment (sys.prefix); the default in a venv")
    where.add_argument("--prefix", metavar="P", help="into P/share/jupyter/kernels")
    return parser


def _window(raw: str) -> int:
    try:
        return positive_int(raw, "--context-window", what="a positive number of tokens", code="BAD_FLAG")
    except UserError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def main(argv: list[str] | None = None) -> int:
    from .cli_tty import guard_output

    given = sys.argv[1:] if argv is None else argv
    guard_output(given[0] if given else "")  # bidi and control characters printed visible (issue 35)
    args = build_parser().parse_args(argv)
    if getattr(args, "no_network", False):
        from .tools.confine import configure

        configure(network=False)
    try:
        if args.command == "show" and args.stats:
            from .session.stats_view import stats_main

            return stats_main(args)
        if args.command == "show" and (args.search is not None or args.export):
            from .observe.query_view import show_search_main

            return show_search_main(args)
        if args.command == "sessions" and args.search is not None:
            from .observe.search_view import search_main

            return search_main(args)
        if args.command == "export-otel":
            from .observe.otel import export_main

            return export_main(args)
        if args.command == "export-html":
            from .observe.export_html import export_main as export_html_main
            from .session.inspect import refuse_overwriting_a_log

            refuse_overwriting_a_log(args.output)

            return export_html_main(args)
        if args.command == "doctor":
            from .doctor import doctor_main

            return doctor_main(args)
        if args.command == "show":
            from .models.chat_format import to_openai_messages
            from .session.inspect import show_main

            return show_main(args, to_openai_messages)
        if args.command == "sessions":
            from .session.inspect import sessions_main

            return sessions_main(args)
        if args.command == "run" and args.context_window is not None:
            os.environ["DSH_CONTEXT_WINDOW"] = str(args.context_window)  # this process's window
        if args.command == "fork":
            from .session.fork import fork_main
            from .tools.registry import is_read_only

            return fork_main(args, read_only=is_read_only)
        if args.command in ("checkpoints", "rewind"):
            from .checkpoint.cli import checkpoints_main, rewind_main
            from .host.hidden_paths import install

            install()  # what the sandbox hides is never restored

            return checkpoints_main(args) if args.command == "checkpoints" else rewind_main(args)
        if args.command == "compare":
            from .session.compare import compare_main

            return compare_main(args)
        if args.command == "run":
            from .cli_run import run_main

            return run_main(args)
        if args.command == "mcp":
            from .tools.mcp.listing import cli_main

            return cli_main(args)
        if args.command == "install-kernel":
            from .kernel.install import install_main

            return install_main(args)
        if args.command == "compact":
            from .cli_run import compact_main

            return compact_main(args)
        if args.command == "policy":
            from .tools.policy_check import check_main

            return check_main(args)
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
