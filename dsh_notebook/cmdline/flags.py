"""The flags of a run — ``python -m dsh_notebook run`` and the ``%dsh`` prompt line — each declared
once (:class:`~.spec.Flag`), in the order ``%dsh --help`` and ``run --help`` list them.

``help`` is the CLI's wording; ``dsh_help`` the cell's where it differs (the defaults a notebook
has: ``DshMagics.*``; approvals asked on stdin while the cell runs). A flag on one surface only
says so (``surfaces``).
"""

from __future__ import annotations

from typing import get_args

from ..config import (
    MAX_COUNT,
    MAX_OUTPUT_TOKENS,
    MAX_REPEATS,
    MAX_SECONDS,
    MAX_STEPS,
    parse_max_repeats,
    parse_max_tokens,
    parse_timeout,
)
from ..wire.events import ChosenMode
from . import checks
from .spec import CLI, DSH, Flag

MODES: tuple[str, ...] = get_args(ChosenMode)  # default, accept-edits, plan, dont-ask, bypass
APPROVALS = ("auto", "ask", "deny")

MODEL = Flag(
    "--model", "provider:model, e.g. script:auto, deepseek:deepseek-chat", "PROVIDER:MODEL", env="DSH_MODEL",
    values="model", example="script:auto",
    dsh_help="model id, e.g. script:auto, deepseek:deepseek-chat, openai:gpt-4o-mini (default: DSH_MODEL or "
             "DshMagics.model, else script:auto)")
BASE_URL = Flag(
    "--base-url", "an OpenAI-compatible endpoint", "URL", env="DSH_BASE_URL", example="http://127.0.0.1:8000/v1",
    dsh_help="any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, a proxy)")
SESSION = Flag(
    "--session", "continue this session id", "ID", values="session", example="s_0123456789ab",
    dsh_help="send the prompt to this saved or open session (it becomes the current one)")
NEW = Flag("--new", "start a new session for this prompt (it becomes the current one)", surfaces=DSH)
BG = Flag("--bg", "return a handle at once and show the live widget; await it, .wait() or .cancel() it", surfaces=DSH)
STEER = Flag("--steer", "if a turn is running, steer it (the text joins its next step) instead of queueing",
             surfaces=DSH)
MODE = Flag(
    "--mode",
    "the permission mode: default (reads run; edits, bash, python ask on the terminal), accept-edits (workspace "
    "edits run too), plan (only reads; the plan is approved before any work), dont-ask (what would ask is denied: "
    "CI), bypass (everything runs but deny rules; needs DSH_ALLOW_BYPASS=1). Default: auto in a demo copy, else "
    "default", "NAME", choices=MODES, check=checks.mode, option="mode", example="accept-edits",
    dsh_help="the permission mode: default (reads run; edits, bash, python and cell inserts ask on stdin while the "
             "cell runs), accept-edits (workspace edits run too), plan (only reads; the agent presents a plan you "
             "approve), dont-ask (what would ask is denied), bypass (everything runs, deny rules aside; needs "
             "DSH_ALLOW_BYPASS=1); a new session's, or the current session's from this prompt on (default "
             "DshMagics.mode, else auto in a demo workspace copy, else default)")
APPROVE = Flag(
    "--approve", "legacy spelling of --mode: ask = default, deny = dont-ask, auto = everything runs but notebook "
    "cells (the demo copy's default)", "MODE", choices=APPROVALS, example="deny",
    dsh_help="legacy spelling of --mode for new sessions: ask = default, deny = dont-ask, auto = everything runs "
             "but notebook_insert, which asks (the demo copy's default)")
CWD = Flag(
    "--cwd", "workspace (default: a fresh copy of the demo workspace for the scripted model script:*, else the "
    "current directory)", "DIR", example="/tmp",
    dsh_help="the workspace of a new session (default: a fresh copy of the demo workspace with the scripted model, "
             "else the kernel's working directory: the notebook's folder)")
DEMO = Flag(
    "--demo", "work on a fresh copy of the demo workspace, whatever the model (approvals auto there)",
    dsh_help="a new session on a fresh copy of the demo workspace, with any model (e.g. --demo --model "
             "local:smollm2; approvals auto there)")
QUIET = Flag("--quiet", "no progress on stderr: only the final answer and the session line on stdout", surfaces=CLI)
RUN_JSON = Flag("--json", "print one JSON object on stdout (sessionId, logPath, turn, completed, reason, answer) "
                "and no progress", surfaces=CLI)
NO_WIDGET = Flag("--no-widget", "with --bg or show: no widget, plain text only", surfaces=DSH)
NO_INTERPOLATE = Flag("--no-interpolate", "send {braces} as typed instead of interpolating notebook variables",
                      surfaces=DSH)
INSPECT = Flag("--inspect", "with show: open the SessionInspector instead of the loop widget", surfaces=DSH)
STATS = Flag("--stats", "timings, tokens, cost and context per request, tool, turn",
             dsh_help="with show: time, tokens, cost and context per request, tool call and turn")
PRESENT = Flag("--present", "with show: the widget in presenter mode (large text for a projector, each stage held "
               "until PageDown / ArrowRight)", surfaces=DSH)
CONTEXT_WINDOW = Flag(
    "--context-window", "context window in tokens (default: the model's)", "N", type=checks.window_text,
    env="DSH_CONTEXT_WINDOW", bounds=(1, MAX_COUNT), check=checks.window, example="8192",
    dsh_help="the context window in tokens for this kernel's requests (default: the model's, from the price "
             "catalog; sets DSH_CONTEXT_WINDOW)")
NO_NETWORK = Flag(
    "--no-network", "no network for sandboxed tool commands (same as DSH_SANDBOX_NETWORK=0)",
    env="DSH_SANDBOX_NETWORK",
    dsh_help="no network for this kernel's sandboxed tool commands from now on (as DshMagics.sandbox_network = "
             "False, DSH_SANDBOX_NETWORK=0)")
MAX_STEPS_FLAG = Flag(
    "--max-steps", "model requests per turn before it ends with reason budget (default DSH_MAX_STEPS or 50; 0: no "
    "limit)", "N", type=int, env="DSH_MAX_STEPS", bounds=(0, MAX_STEPS), check=checks.steps, option="max_steps",
    example="10",
    dsh_help="model requests per turn before it ends with reason budget (default DSH_MAX_STEPS / "
             "DshMagics.max_steps, else 50; 0: no limit); applies to the session from now on")
MAX_TIME = Flag(
    "--max-time", "seconds per turn before it ends with reason budget (default DSH_MAX_TIME, else none)", "SECONDS",
    type=float, env="DSH_MAX_TIME", bounds=(0, MAX_SECONDS), check=checks.seconds_budget, option="max_time",
    example="300",
    dsh_help="seconds per turn before it ends with reason budget (default DSH_MAX_TIME / DshMagics.max_time, else "
             "none); applies to the session from now on")
RULES = Flag(
    "--rules", "approval rules, a JSON list of {tool, pattern, action} (default DSH_POLICY_FILE)", "FILE",
    env="DSH_POLICY_FILE", check=checks.rules_file, option="rules", example="rules.json",
    dsh_help="approval rules for the session: a JSON list of {tool, pattern, action} (default DSH_POLICY_FILE / "
             "DshMagics.policy_file)")
MAX_TOKENS = Flag(
    "--max-tokens", "output limit of every model request (default DSH_MAX_TOKENS, else derived from the window); a "
    "reply cut by it ends the turn with reason max-tokens", "N", env="DSH_MAX_TOKENS",
    bounds=(1, MAX_OUTPUT_TOKENS), check=parse_max_tokens, option="max_tokens", example="256",
    dsh_help="output limit of every model request (default DSH_MAX_TOKENS / DshMagics.max_tokens, else derived from "
             "the window); a reply cut by it ends the turn max-tokens; applies to the session from now on")
OPTION = Flag(
    "--option", "a request option sent with every request, the value as JSON else a string (repeatable: --option "
    "temperature=0.2 --option seed=7; any provider extra, e.g. top_k=40)", "KEY=VALUE", repeat=True,
    check=checks.options, option="options", example="temperature=0.2",
    dsh_help="a request option sent with every request, the value as JSON else a string (repeatable: --option "
             "temperature=0.2 --option seed=7; KEY=null removes one; default DshMagics.options)")
TOOLS = Flag(
    "--tools", "the tools offered to the model: a comma list (read,grep), none (a plain chat turn) or all (default)",
    "NAMES", check=checks.tools, option="tools", example="read,grep",
    dsh_help="the tools offered to the model: a comma list (read,grep), none (a plain chat turn) or all (default "
             "DshMagics.tools)")
MAX_REPEATS_FLAG = Flag(
    "--max-repeats", "the same tool call answered the same way (same result, denial or error) tolerated this many "
    "times in a row before the turn ends stuck (default 2; 0: no guard)", "N", bounds=(0, MAX_REPEATS),
    check=parse_max_repeats, option="max_repeats", example="3",
    dsh_help="the same tool call answered the same way tolerated this many times in a row before the turn ends "
             "stuck (default 2; 0: no guard)")
FIRST_BYTE_TIMEOUT = Flag(
    "--first-byte-timeout", "seconds a model request waits for the server's first chunk (default "
    "DSH_FIRST_BYTE_TIMEOUT, else DSH_TIMEOUT, else 600 for a loopback server, else 120); fails MODEL_TIMEOUT",
    "SECONDS", env="DSH_FIRST_BYTE_TIMEOUT", bounds=(0, MAX_SECONDS), above_low=True, check=parse_timeout,
    option="first_byte_timeout", example="30",
    dsh_help="seconds a model request waits for the first chunk (default DSH_FIRST_BYTE_TIMEOUT, else 600 for a "
             "loopback server, else 120)")
IDLE_TIMEOUT = Flag(
    "--idle-timeout", "seconds between two chunks of a reply still arriving (default DSH_IDLE_TIMEOUT, else "
    "DSH_TIMEOUT or 120); fails MODEL_TIMEOUT, never retried once something arrived", "SECONDS",
    env="DSH_IDLE_TIMEOUT", bounds=(0, MAX_SECONDS), above_low=True, check=parse_timeout, option="idle_timeout", example="60",
    dsh_help="seconds between two chunks of a reply (default DSH_IDLE_TIMEOUT, else 120)")
BREAK = Flag(
    "--break", "the agent debugger: pause at these stages (01-06, e.g. 03,06, or all) and ask on the terminal c "
    "continue / s step / r run to / p print / e edit / q cancel (without a terminal: continued)", "STAGES",
    dest="breakpoints", check=checks.stages, example="03,06",
    dsh_help="the agent debugger: pause the run at these stages of the loop (01–06, e.g. 03,06, or all); the cell "
             "asks c/s/r/p/e/q like pdb; with --bg the handle has .wait_paused(), .step(), .continue_(), .edit()")
BREAK_TOOLS = Flag(
    "--break-tools", "with --break: only calls of these tools (bash,edit)", "NAMES", check=checks.tool_names,
    example="bash,edit",
    dsh_help="with --break: pause only for calls of these tools (comma-separated, e.g. bash,edit)")
BREAK_WHEN = Flag(
    "--break-when", "with --break: only calls this condition holds for, e.g. 'name==bash and command~\"rm \"' "
    "(name, args or an argument; == != ~ !~; and or not; parentheses)", "EXPR", check=checks.when,
    example="name==bash",
    dsh_help="with --break: pause only for calls this condition holds for, e.g. 'name==bash and command~\"rm \"' "
             "(name, args or an argument; == != ~ !~; and or not, parentheses; quoted or bare values)")
RUN_TO = Flag(
    "--run-to", "the agent debugger: pause once at stage N of the turn's K-th tool call (or a call id), e.g. '05 c3' "
    "or 'stage 5 of c3' (with or without --break); at a pause r asks for another", "'N cK'", check=checks.run_to,
    example="05 c3",
    dsh_help="the agent debugger: pause once at stage N of the turn's K-th tool call (or a call id), e.g. --run-to "
             "'05 c3' or 'stage 5 of c3'; with or without --break (its breakpoints still pause on the way); at a "
             "pause r asks for another")
HELP = Flag("--help", "show this help", short="-h", surfaces=DSH)

RUN_FLAGS: tuple[Flag, ...] = (
    MODEL, BASE_URL, SESSION, NEW, BG, STEER, MODE, APPROVE, CWD, DEMO, QUIET, RUN_JSON, NO_WIDGET, NO_INTERPOLATE,
    INSPECT.on(DSH), STATS.on(DSH), PRESENT, CONTEXT_WINDOW, NO_NETWORK, MAX_STEPS_FLAG, MAX_TIME, RULES, MAX_TOKENS,
    OPTION, TOOLS, MAX_REPEATS_FLAG, FIRST_BYTE_TIMEOUT, IDLE_TIMEOUT, BREAK, BREAK_TOOLS, BREAK_WHEN, RUN_TO, HELP,
)
"""The flags of ``run`` and of the ``%dsh`` line (before the prompt or a subcommand): ``--inspect``,
``--stats``, ``--present`` and ``--no-widget`` belong to ``show`` there but may lead the line."""
