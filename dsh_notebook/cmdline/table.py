"""The command registry: every command of ``python -m dsh_notebook`` and of ``%dsh``, declared once.

From this table come the CLI's argparse parsers (:mod:`.argparser`), the ``%dsh`` line parser
(:mod:`.dsh_line`), both help texts (:mod:`.help`), tab completion (:mod:`.complete`) and the
reference docs (:func:`reference`). A command on one surface only says so (``surfaces``); a flag
too. ``runs`` names the CLI's handler (``module:function``, imported when the command runs, so
``python -m dsh_notebook schema`` loads no host); the ``%dsh`` side runs
``DshMagics.cmd_<name>`` (:mod:`dsh_notebook.notebook.magic.subcommands`).

To add a command: one :class:`~.spec.Command` here (its words, help, args and flags), its
handler, and nothing else — the conformance test (``tests/test_command_registry.py``) checks
that both surfaces, the help and the completion have it.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import checks
from .flags import (
    BASE_URL,
    CONTEXT_WINDOW,
    INSPECT,
    MODE,
    MODEL,
    MODES,
    NO_NETWORK,
    NO_WIDGET,
    PRESENT,
    RULES,
    RUN_FLAGS,
    STATS,
)
from .spec import CLI, DSH, Arg, Command, Flag

TARGET = Arg("target", "session id or path to a .jsonl log", "ID_OR_PATH", values="session")
SESSION_WORD = Arg("target", "a session id (default: the current session)", "ID", nargs="?", values="session",
                   surfaces=DSH)
JSON = Flag("--json", "one JSON object", surfaces=CLI)
MCP_ACTIONS = ("list", "start", "restart", "add", "remove")  # %dsh mcp ACTION … (tools/mcp/listing)
REWIND_SWITCHES = (
    Flag("--files", "restore the workspace's files (the default)"),
    Flag("--conversation", "fork the conversation before turn N: a new session (prints session: ID log: PATH)"),
    Flag("--variables", "notebook variables (only in a live kernel: %%dsh rewind)"),
    Flag("--dry-run", "say what would change; change nothing"),
    Flag("--force", "overwrite files changed outside the agent (conflicts)"),
)

COMMANDS: tuple[Command, ...] = (
    Command(
        "run", "run one prompt to the end of its turn",
        "Run one prompt to the end of its turn. The streamed text and tool lines go to stderr (unless --quiet or "
        "--json); the final answer, then 'session: <id> log: <path>', to stdout. At a terminal (stdout and stderr "
        "both TTYs) the answer is shown once, by the stream; piped or redirected, stdout always carries it. Exit 0 "
        "when the turn completed, 1 otherwise, 2 on a bad flag, 130 on Ctrl-C.",
        args=(Arg("prompt", "the prompt text", nargs="+"),), flags=RUN_FLAGS, runs="dsh_notebook.cli_run:run_main",
        dsh_prompt=True),
    Command("stop", "cancel the running turn of the current session (or --session ID)", surfaces=DSH,
            dsh_lines=(("stop", "cancel the running turn of the current session (or --session ID)"),),
            dsh_usage="%dsh stop (the current session's turn) or %dsh --session ID stop"),
    Command(
        "sessions", "list saved sessions (or search them)",
        flags=(Flag("--search", "sessions and events whose text matches", "TEXT", example="divide"),
               Flag("--limit", "with --search: at most this many events", "N", type=int, default=50, surfaces=CLI),
               JSON.on(help="with --search: one JSON object")),
        runs="dsh_notebook.cli:sessions_main",
        dsh_lines=(("sessions", "table of saved sessions: id, title, turns, last activity, status"),
                   ("sessions --search TEXT", "sessions and events (seq, type, snippet) whose prompts, answers or "
                                              "tool text match")),
        dsh_usage="%dsh sessions [--search TEXT]"),
    Command("resume", "reopen a saved session and make it the current one", surfaces=DSH, args=(SESSION_WORD,),
            dsh_lines=(("resume [ID]", "reopen a saved session (crash repair applied) and make it the current one; "
                                       "without ID, this notebook's last session; --model=replay:ORIGIN replays a fork"),),
            dsh_usage="%dsh resume [ID]"),
    Command(
        "show", "print a session's events or its next request's messages",
        args=(TARGET.on(CLI), Arg("target", "a session id or a log's path (default: the current session)", "ID|PATH",
                                 nargs="?", values="session", surfaces=DSH)),
        flags=(Flag("--messages", "repaired messages, OpenAI form", surfaces=CLI),
               JSON.on(help="events as JSON lines (with --stats: one JSON object)"),
               STATS, CONTEXT_WINDOW.on(CLI, help="with --stats: the context window in tokens", dsh_help=""),
               Flag("--search", 'only the events matching QUERY: field terms type:tool/result name:bash exit:1 '
                                '(exit:!0) turn:3 seq:10..20 and free text ("a phrase" or words), all must match',
                    "QUERY", surfaces=CLI, example="type:tool/result"),
               Flag("--export", "with --search: write the matching events as JSON lines or CSV "
                                "(seq,time,turn,type,name,exit,snippet)", "{jsonl,csv}", choices=("jsonl", "csv"),
                    surfaces=CLI),
               INSPECT, PRESENT, NO_WIDGET.on(help="no widget: the events as text")),
        runs="dsh_notebook.cli:show_main",
        dsh_lines=(("show [ID|PATH]", "the loop widget of a session (default: current) or of a saved log by its "
                                      "path; --inspect for the inspector; --stats for its time, tokens and cost"),),
        dsh_usage="%dsh show [--inspect|--stats] [--present] [ID]"),
    Command("config", "effective model, base URL, workspace, home; the key only as set / not set", surfaces=DSH,
            dsh_lines=(("config", "effective model, base URL, workspace, home; the key only as set / not set"),),
            dsh_usage="%dsh config"),
    Command(
        "mcp", "MCP servers of $DSH_HOME/mcp.json: list (status, tools), add, remove",
        args=(Arg("action", "list (the default), add or remove", nargs="?", choices=("list", "add", "remove"),
                  default="list", surfaces=CLI),
              Arg("action", "list (the default), start [NAME], restart NAME, add or remove", nargs="?",
                  choices=MCP_ACTIONS, surfaces=DSH),
              Arg("rest", "add: NAME [--env K=V] [--cwd DIR] [--timeout S] -- COMMAND ARGS | NAME --url URL; "
                          "remove: NAME", nargs="...")),
        flags=(Flag("--json", "list: the listing as JSON", surfaces=CLI),
               Flag("--no-start", "list: do not start the servers (no tools shown)", surfaces=CLI)),
        runs="dsh_notebook.tools.mcp.listing:cli_main",
        dsh_lines=(("mcp [list]", "MCP servers of $DSH_HOME/mcp.json: status (not started / running / failed) and tools"),
                   ("mcp start [NAME]", "start the MCP servers now (else the first prompt starts them); restart NAME"),
                   ("mcp add NAME -- CMD ARGS", "add a stdio MCP server to mcp.json (--env K=V, --timeout S); or "
                                                "NAME --url URL"),
                   ("mcp remove NAME", "remove an MCP server from mcp.json (it stops; its tools go)")),
        dsh_usage="%dsh mcp [list|start [NAME]|restart NAME|add NAME -- CMD ARGS|remove NAME]"),
    Command("doctor", "print which protections (sandbox, redaction, locks …) are active here",
            runs="dsh_notebook.doctor:doctor_main",
            dsh_lines=(("doctor", "which protections are active here: sandbox, network, redaction, grep engine, locks"),),
            dsh_usage="%dsh doctor"),
    Command(
        "compact", "summarise a saved session's older turns into one message now",
        args=(Arg("session", "session id", surfaces=CLI), SESSION_WORD),
        flags=(MODEL.on(CLI, help="the model that writes the summary (default: the session's)", dsh_help=""),
               BASE_URL.on(CLI, help="an OpenAI-compatible endpoint (default: the session's)", dsh_help="")),
        runs="dsh_notebook.cli_run:compact_main",
        dsh_lines=(("compact [ID]", "summarise the older turns of a session (default: current) into one message now"),),
        dsh_usage="%dsh compact [ID]"),
    Command("policy", "the approval policy of a session: mode, budgets, rules file, session grants, callables",
            surfaces=DSH, args=(SESSION_WORD,),
            dsh_lines=(("policy [ID]", "the approval policy of a session: mode, budgets, rules file, session grants, "
                                       "callables"),),
            dsh_usage="%dsh policy [ID]"),
    Command(
        "policy check", "dry run: the verdict of the rules for every tool call of a saved session",
        args=(TARGET.on(CLI), Arg("target", "a session id or a log's path (default: the current session)",
                                  "ID|PATH", nargs="?", values="session", surfaces=DSH)),
        flags=(RULES.on(help="a JSON rules file (default DSH_POLICY_FILE)", dsh_help="", check=None, option=""),
               MODE.on(help="what this permission mode would have decided for each call (rules and grants of the "
                            "log included); without it, the rules alone", dsh_help="", choices=(*MODES, "auto"),
                       check=None, option="")),
        runs="dsh_notebook.tools.policy_check:check_main",
        dsh_lines=(("policy check [ID]", "the CLI's dry run: CALLID NAME allow/deny/ask RULE for every tool call; "
                                         "--rules FILE, --mode NAME"),),
        dsh_usage="%dsh policy check [ID|PATH] [--rules FILE] [--mode NAME]"),
    Command("mode", "the current session's permission mode, or change it", surfaces=DSH,
            args=(Arg("name", "a permission mode", "NAME", nargs="?", choices=MODES),),
            dsh_lines=(("mode [NAME]", "the current session's permission mode; with NAME it changes (a new session's "
                                       "when none yet): default, accept-edits, plan, dont-ask, bypass (DSH_ALLOW_BYPASS=1)"),),
            dsh_usage=f"%dsh mode [{'|'.join(MODES)}]"),
    Command(
        "fork", "a new session repeating events 0..SEQ of a saved one",
        args=(TARGET.on(CLI), SESSION_WORD),
        flags=(Flag("--at", "the last event to keep", "SEQ", type=int, required=True, check=checks.seq, example="12",
                    dsh_help="the last event of ID to keep"),),
        runs="dsh_notebook.cli:fork_main",
        dsh_lines=(("fork [ID] --at SEQ", "a new session repeating events 0..SEQ of ID (default: current); it "
                                          "becomes current"),),
        dsh_usage="%dsh fork [ID] --at SEQ"),
    Command(
        "compare", "align two sessions by turn and step; first divergence",
        args=(Arg("a", "session id or log path", values="session"), Arg("b", "session id or log path", values="session")),
        flags=(JSON, NO_WIDGET.on(help="no widget: the table")),
        runs="dsh_notebook.analysis.compare:compare_main",
        dsh_lines=(("compare A B", "two sessions side by side by turn and step (a widget); the first divergence and "
                                   "its diff"),),
        dsh_usage="%dsh compare A B"),
    Command(
        "checkpoints", "a session's turns with their checkpoints and file changes (+a ~m -d)",
        args=(TARGET.on(CLI), SESSION_WORD),
        flags=(Flag("--diff", "the turn's changed files as unified diffs", "TURN", type=int, values="turn",
                    check=checks.turn, example="1"), JSON),
        runs="dsh_notebook.cli:checkpoints_main",
        dsh_lines=(("checkpoints [ID]", "a session's turns with their checkpoints and file changes (+a ~m -d); "
                                        "--diff TURN as unified diffs"),),
        dsh_usage="%dsh checkpoints [ID] [--diff TURN]"),
    Command(
        "rewind", "put the workspace (and/or conversation) back as at the start of a turn",
        "Restore the workspace byte for byte as at the start of turn N (files created since are removed) and/or fork "
        "the conversation before it. Exit 0: done; 1: conflicts left alone (files changed outside the agent; --force "
        "overwrites); 2: an error (SESSION_BUSY while a process runs the session, CHECKPOINT_BLOB_MISSING naming the "
        "files not restored).",
        args=(TARGET.on(CLI), Arg("turn", "the turn (default: the last)", "N", nargs="?", values="turn", surfaces=DSH)),
        flags=(Flag("--to-turn", "the turn whose start to go back to", "N", type=int, required=True, values="turn",
                    check=checks.turn, example="2"), *REWIND_SWITCHES),
        runs="dsh_notebook.cli:rewind_main",
        dsh_lines=(("rewind [N]", "files, variables and conversation back to the start of turn N (default: the "
                                  "last); --files / --conversation / --variables for some of them, --dry-run, --force "
                                  "(overwrite conflicts)"),),
        dsh_usage="%dsh rewind [ID] [N | --to-turn N] [--files] [--conversation] [--variables] [--dry-run] [--force]"),
    Command("undo", "rewind the last turn (files, variables, conversation)", surfaces=DSH,
            flags=REWIND_SWITCHES[3:],
            dsh_lines=(("undo", "rewind the last turn (files, variables, conversation); --dry-run, --force"),),
            dsh_usage="%dsh undo [--dry-run] [--force]"),
    Command("changes", "the files a turn changed, as unified diffs", surfaces=DSH,
            args=(Arg("turn", "the turn (default: the last)", "TURN", nargs="?", values="turn"),),
            dsh_lines=(("changes [TURN]", "the files a turn (default: the last) changed, as unified diffs"),),
            dsh_usage="%dsh changes [TURN]"),
    Command(
        "export-otel", "send a saved session to the OTLP endpoint as traces", surfaces=CLI, args=(TARGET,),
        flags=(Flag("--endpoint", "OTLP/HTTP endpoint (default: OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT)", "URL",
                    env="OTEL_EXPORTER_OTLP_ENDPOINT"),),
        runs="dsh_notebook.observe.otel:export_main"),
    Command(
        "export-html", "one self-contained HTML page replaying a session (no kernel, no network)", surfaces=CLI,
        args=(TARGET,),
        flags=(Flag("--output", "the page to write", "FILE.html", short="-o", required=True),
               Flag("--theme", "the page's colours (default light)", "{light,dark}", choices=("light", "dark"),
                    default="light")),
        runs="dsh_notebook.cli:export_html_main"),
    Command("schema", "print the JSON Schema (2020-12) of the wire: LogLine, ClientMessage, ServerMessage",
            surfaces=CLI, runs="dsh_notebook.cli:schema_main"),
    Command("serve", "serve the host protocol", surfaces=CLI,
            flags=(Flag("--stdio", "JSON lines on stdin/stdout: client messages in, server messages out",
                        required=True),
                   NO_NETWORK.on(help="no network for sandboxed tool commands", dsh_help="")),
            runs="dsh_notebook.launcher:serve_main"),
    Command(
        "mcp-bridge", "relay MCP over stdio to the notebook server of the running JupyterLab (for external agents: "
        "Claude Code, Codex, Cursor)", surfaces=CLI,
        flags=(Flag("--url", "the Jupyter server's URL (default: the running server whose root holds the current "
                    "directory, else the latest)", "URL", example="http://127.0.0.1:8888/"),
               Flag("--token", "its token (default: from its runtime file, or $JUPYTER_TOKEN with --url)", "TOKEN",
                    example="abc123")),
        runs="dsh_notebook.external.bridge:cli_main"),
    Command(
        "install-kernel", 'install the Jupyter kernelspec "dsh" (Agent (dsh))', surfaces=CLI,
        flags=(Flag("--user", "into the user's Jupyter data directory", group="where"),
               Flag("--sys-prefix", "into this environment (sys.prefix); the default in a venv", group="where"),
               Flag("--prefix", "into P/share/jupyter/kernels", "P", group="where")),
        runs="dsh_notebook.kernel.install:install_main"),
    Command("help", "this help", surfaces=DSH, dsh_usage="%dsh help"),
)

GROUPS = {"policy": "approval policies"}  # the CLI's help of a word that leads commands of several words

_BY_NAME = {c.name: c for c in COMMANDS}


def command(name: str) -> Command:
    return _BY_NAME[name]


def reference() -> Iterator[Command]:
    """Every command, in order, with its args and flags (each saying its surfaces, help, type,
    bounds, choices, environment variable): the source of the generated reference docs."""
    yield from COMMANDS


def on(surface: str) -> tuple[Command, ...]:
    return tuple(c for c in COMMANDS if surface in c.surfaces)


def line_flags() -> tuple[Flag, ...]:
    """The flags a ``%dsh`` line may start with (``run``'s on ``%dsh``)."""
    return command("run").flags_on("dsh")


def dsh_words() -> tuple[tuple[str, ...], ...]:
    """The words that name a ``%dsh`` subcommand, the longest first (``policy check`` before ``policy``)."""
    return tuple(sorted((c.words for c in on("dsh") if not c.dsh_prompt), key=len, reverse=True))

