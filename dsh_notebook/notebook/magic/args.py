"""Parsing of the ``%dsh`` line: leading ``--flags``, then free text (the prompt or a subcommand).

IPython does not expand the line (``@no_var_expand``), and we do not run it through ``shlex`` or
``argparse``: only the leading flags are tokenised, so the prompt keeps its quotes, apostrophes,
dollar signs and spacing exactly as typed. ``--`` ends the flags explicitly (``%dsh -- --new is
a flag`` sends ``--new is a flag`` as the prompt, and ``%dsh -- show me`` is a prompt, not the
``show`` subcommand).

``{name}`` (or ``{name.attr}``) in the prompt is replaced by ``str()`` of that notebook variable;
``{{`` and ``}}`` are literal braces; any other brace is left as typed; a name that is not defined
is a ``UserError`` (``UNKNOWN_VARIABLE``). ``--no-interpolate`` sends the text untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import UserError

MCP_ACTIONS = ("list", "start", "restart", "add", "remove")  # `%dsh mcp ACTION …` (tools/mcp/listing)


@dataclass(frozen=True)
class FlagSpec:
    name: str
    dest: str
    metavar: str | None  # None: a switch without a value
    help: str
    choices: tuple[str, ...] = ()


FLAGS: tuple[FlagSpec, ...] = (
    FlagSpec("--model", "model", "PROVIDER:MODEL", "model id, e.g. script:auto, deepseek:deepseek-chat, openai:gpt-4o-mini (default: DSH_MODEL or DshMagics.model, else script:auto)"),
    FlagSpec("--base-url", "base_url", "URL", "any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, a proxy)"),
    FlagSpec("--session", "session", "ID", "send the prompt to this saved or open session (it becomes the current one)"),
    FlagSpec("--new", "new", None, "start a new session for this prompt (it becomes the current one)"),
    FlagSpec("--bg", "bg", None, "return a handle at once and show the live widget; await it, .wait() or .cancel() it"),
    FlagSpec("--steer", "steer", None, "if a turn is running, steer it (the text joins its next step) instead of queueing"),
    FlagSpec("--mode", "mode", "NAME", "the permission mode: default (reads run; edits, bash, python and cell inserts ask on stdin while the cell runs), accept-edits (workspace edits run too), plan (only reads; the agent presents a plan you approve), dont-ask (what would ask is denied), bypass (everything runs, deny rules aside; needs DSH_ALLOW_BYPASS=1); a new session's, or the current session's from this prompt on (default DshMagics.mode, else auto in a demo workspace copy, else default)", ("default", "accept-edits", "plan", "dont-ask", "bypass")),
    FlagSpec("--approve", "approve", "MODE", "legacy spelling of --mode for new sessions: ask = default, deny = dont-ask, auto = everything runs but notebook_insert, which asks (the demo copy's default)", ("auto", "ask", "deny")),
    FlagSpec("--cwd", "cwd", "DIR", "the workspace of a new session (default: a fresh copy of the demo workspace with the scripted model, else the kernel's working directory: the notebook's folder)"),
    FlagSpec("--demo", "demo", None, "a new session on a fresh copy of the demo workspace, with any model (e.g. --demo --model local:smollm2; approvals auto there)"),
    FlagSpec("--no-widget", "no_widget", None, "with --bg or show: no widget, plain text only"),
    FlagSpec("--no-interpolate", "no_interpolate", None, "send {braces} as typed instead of interpolating notebook variables"),
    FlagSpec("--inspect", "inspect", None, "with show: open the SessionInspector instead of the loop widget"),
    FlagSpec("--stats", "stats", None, "with show: time, tokens, cost and context per request, tool call and turn"),
    FlagSpec("--present", "present", None, "with show: the widget in presenter mode (large text for a projector, each stage held until PageDown / ArrowRight)"),
    FlagSpec("--context-window", "context_window", "N", "the context window in tokens for this kernel's requests (default: the model's, from the price catalog; sets DSH_CONTEXT_WINDOW)"),
    FlagSpec("--max-steps", "max_steps", "N", "model requests per turn before it ends with reason budget (default DSH_MAX_STEPS / DshMagics.max_steps, else 50; 0: no limit); applies to the session from now on"),
    FlagSpec("--max-time", "max_time", "SECONDS", "seconds per turn before it ends with reason budget (default DSH_MAX_TIME / DshMagics.max_time, else none); applies to the session from now on"),
    FlagSpec("--rules", "rules", "FILE", "approval rules for the session: a JSON list of {tool, pattern, action} (default DSH_POLICY_FILE / DshMagics.policy_file)"),
    FlagSpec("--max-tokens", "max_tokens", "N", "output limit of every model request (default DSH_MAX_TOKENS / DshMagics.max_tokens, else derived from the window); a reply cut by it ends the turn max-tokens; applies to the session from now on"),
    FlagSpec("--option", "option", "KEY=VALUE", "a request option sent with every request, the value as JSON else a string (repeatable: --option temperature=0.2 --option seed=7; KEY=null removes one; default DshMagics.options)"),
    FlagSpec("--tools", "tools", "NAMES", "the tools offered to the model: a comma list (read,grep), none (a plain chat turn) or all (default DshMagics.tools)"),
    FlagSpec("--max-repeats", "max_repeats", "N", "the same tool call answered the same way tolerated this many times in a row before the turn ends stuck (default 2; 0: no guard)"),
    FlagSpec("--first-byte-timeout", "first_byte_timeout", "SECONDS", "seconds a model request waits for the first chunk (default DSH_FIRST_BYTE_TIMEOUT, else 600 for a loopback server, else 120)"),
    FlagSpec("--idle-timeout", "idle_timeout", "SECONDS", "seconds between two chunks of a reply (default DSH_IDLE_TIMEOUT, else 120)"),
    FlagSpec("--break", "breakpoints", "STAGES", "the agent debugger: pause the run at these stages of the loop (01–06, e.g. 03,06, or all); the cell asks c/s/r/p/e/q like pdb; with --bg the handle has .wait_paused(), .step(), .continue_(), .edit()"),
    FlagSpec("--break-tools", "break_tools", "NAMES", "with --break: pause only for calls of these tools (comma-separated, e.g. bash,edit)"),
    FlagSpec("--break-when", "break_when", "EXPR", "with --break: pause only for calls this condition holds for, e.g. 'name==bash and command~\"rm \"' (name, args or an argument; == != ~ !~; and or not, parentheses; quoted or bare values)"),
    FlagSpec("--run-to", "run_to", "'N cK'", "the agent debugger: pause once at stage N of the turn's K-th tool call (or a call id), e.g. --run-to '05 c3' or 'stage 5 of c3'; with or without --break (its breakpoints still pause on the way); at a pause r asks for another"),
    FlagSpec("--help", "help", None, "show this help"),
)
_BY_NAME = {spec.name: spec for spec in FLAGS}
_BY_NAME["-h"] = _BY_NAME["--help"]

@dataclass
class MagicArgs:
    """The parsed ``%dsh`` line (and cell body)."""

    model: str | None = None
    base_url: str | None = None
    session: str | None = None
    new: bool = False
    bg: bool = False
    steer: bool = False
    approve: str | None = None
    mode: str | None = None
    cwd: str | None = None
    demo: bool = False  # --demo: a fresh copy of the demo workspace, whatever the model
    no_widget: bool = False
    no_interpolate: bool = False
    inspect: bool = False
    stats: bool = False
    present: bool = False
    context_window: str | None = None
    search: str | None = None  # sessions --search TEXT
    breakpoints: str | None = None
    break_tools: str | None = None
    break_when: str | None = None
    run_to: str | None = None
    help: bool = False
    max_steps: str | None = None
    max_time: str | None = None
    rules: str | None = None
    max_tokens: str | None = None
    option: list[str] = field(default_factory=list)  # --option KEY=VALUE, repeatable
    tools: str | None = None
    max_repeats: str | None = None
    first_byte_timeout: str | None = None
    idle_timeout: str | None = None
    command: str = "prompt"  # "prompt", "help", "mcp", or one of SUBCOMMAND_SHAPES
    target: str | None = None
    targets: list[str] = field(default_factory=list)  # every positional word of a subcommand
    options: dict[str, str] = field(default_factory=dict)  # a subcommand's own --opt VALUE
    text: str = ""
    given: set[str] = field(default_factory=set)


def _read_token(line: str, pos: int) -> tuple[str, int]:
    """One whitespace-delimited token starting at ``pos``; quotes group and are removed."""
    out: list[str] = []
    quote: str | None = None
    i = pos
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < len(line) and line[i + 1] in '"\\':
                i += 1
                out.append(line[i])
            else:
                out.append(ch)
        elif ch in "\"'":
            quote = ch
        elif ch.isspace():
            break
        else:
            out.append(ch)
        i += 1
    if quote:
        raise UserError(f"unclosed {quote} in a flag value", code="BAD_FLAG")
    return "".join(out), i


def _skip_space(line: str, pos: int) -> int:
    while pos < len(line) and line[pos].isspace():
        pos += 1
    return pos


def _set_flag(args: MagicArgs, spec: FlagSpec, value: str | None) -> None:
    if spec.metavar is None:
        if value is not None:
            raise UserError(f"{spec.name} takes no value", code="BAD_FLAG")
        setattr(args, spec.dest, True)
    else:
        if value is None or value == "":
            raise UserError(f"{spec.name} needs a value ({spec.metavar})", code="BAD_FLAG")
        if spec.choices and value not in spec.choices:
            raise UserError(f"{spec.name} must be one of {', '.join(spec.choices)}, not {value!r}", code="BAD_FLAG")
        current = getattr(args, spec.dest)
        if isinstance(current, list):  # a repeatable flag
            current.append(value)
        else:
            setattr(args, spec.dest, value)
    args.given.add(spec.dest)


def parse_line(line: str, cell: str | None = None) -> MagicArgs:
    """Parse ``%dsh`` / ``%%dsh`` input. Raises :class:`UserError` on a bad flag."""
    args = MagicArgs()
    pos = _skip_space(line, 0)
    explicit_end = False
    while pos < len(line) and line.startswith("-", pos):
        token, end = _read_token(line, pos)
        if token == "--":
            pos, explicit_end = _skip_space(line, end), True
            break
        name, eq, value = token.partition("=")
        spec = _BY_NAME.get(name)
        if spec is None:
            if not name.startswith("--"):
                break  # "-1 is odd" style free text
            known = ", ".join(s.name for s in FLAGS)
            raise UserError(f"unknown flag {name}; known flags: {known} (use -- before a prompt that starts with --)", code="BAD_FLAG")
        pos = _skip_space(line, end)
        if spec.metavar is not None and not eq:
            if pos >= len(line):
                raise UserError(f"{spec.name} needs a value ({spec.metavar})", code="BAD_FLAG")
            value, end = _read_token(line, pos)
            pos = _skip_space(line, end)
        _set_flag(args, spec, value if (eq or spec.metavar is not None) else None)
    rest = line[pos:].strip()
    body = cell if cell is not None and cell.strip() else None
    if args.new and args.session:
        raise UserError("--new and --session exclude each other", code="BAD_FLAG")
    if args.demo and args.cwd:
        raise UserError("--demo and --cwd exclude each other (--demo works on a fresh copy of the demo workspace)",
                        code="BAD_FLAG")
    if body is None and not explicit_end:
        _detect_subcommand(args, rest)
    if args.command == "prompt":
        args.text = rest if body is None else (f"{rest}\n{body}" if rest else body)
        args.text = args.text.strip("\n")
        if args.help and not args.text.strip():
            args.command = "help"
        elif not args.text.strip():
            raise UserError("empty prompt; usage: %dsh [FLAGS] PROMPT (see %dsh --help)", code="EMPTY_PROMPT")
        for flag in ("stats", "inspect", "present"):  # a typo of `show --stats …` must not become a prompt
            if getattr(args, flag):
                raise UserError(f"--{flag} goes with show: %dsh show --{flag} [ID]; to send the line as a prompt "
                                f"drop --{flag}", code="BAD_FLAG")
    return args


# subcommand → (at most this many positional words, its own options that take a value)
SUBCOMMAND_SHAPES: dict[str, tuple[int, tuple[str, ...]]] = {
    "stop": (0, ()), "sessions": (0, ()), "config": (0, ()), "help": (0, ()),
    "resume": (1, ()), "show": (1, ()), "fork": (1, ("--at",)), "compare": (2, ()),
    "doctor": (0, ()), "compact": (1, ()), "policy": (1, ()),
    "rewind": (1, ()), "undo": (0, ()), "changes": (1, ()), "mode": (1, ()),
}
REWIND_FLAGS = ("--files", "--conversation", "--variables", "--dry-run", "--force")


SUBCOMMAND_USAGE = {
    "stop": "%dsh stop (the current session's turn) or %dsh --session ID stop", "sessions": "%dsh sessions [--search TEXT]",
    "config": "%dsh config", "help": "%dsh help", "doctor": "%dsh doctor", "resume": "%dsh resume [ID]",
    "show": "%dsh show [--inspect|--stats] [--present] [ID]", "fork": "%dsh fork [ID] --at SEQ", "compare": "%dsh compare A B",
    "compact": "%dsh compact [ID]", "policy": "%dsh policy [ID]",
    "rewind": "%dsh rewind [ID] [N | --to-turn N] [--files] [--conversation] [--variables] [--dry-run] [--force]",
    "undo": "%dsh undo [--dry-run] [--force]", "changes": "%dsh changes [TURN]",
    "mode": "%dsh mode [default|accept-edits|plan|dont-ask|bypass]",
}
_TARGET = re.compile(r"^(s_[0-9A-Za-z_-]+|\{[A-Za-z_][\w.]*\}|\S+\.jsonl)$")


def _looks_like_target(word: str) -> bool:
    """A session id (``s_…``), a log path (``….jsonl``) or a ``{variable}`` holding one."""
    return bool(_TARGET.match(word))


def _takes(limit: int) -> str:
    return "no session id" if limit == 0 else "one session id" if limit == 1 else f"{limit} session ids"


def _detect_subcommand(args: MagicArgs, rest: str) -> None:
    """A whole line like ``stop``, ``resume ID``, ``show [--inspect] [ID]``, ``fork [ID] --at SEQ``."""
    words = rest.split()
    if words and words[0] == "mcp" and (len(words) == 1 or words[1] in MCP_ACTIONS):
        args.command, args.text = "mcp", rest[3:].strip()  # `%dsh mcp add NAME -- CMD …`: parsed later
        return
    if not words or words[0] not in SUBCOMMAND_SHAPES:
        return
    head, tail = words[0], words[1:]
    if head in ("rewind", "undo", "changes"):
        _checkpoint_subcommand(args, head, tail)
        return
    if head == "sessions" and tail and tail[0].partition("=")[0] == "--search":
        first = tail[0].partition("=")[2]
        args.search = " ".join([first, *tail[1:]] if first else tail[1:]).strip()
        if not args.search:
            raise UserError("usage: %dsh sessions --search TEXT", code="BAD_FLAG")
        args.command = "sessions"
        return
    limit, own = SUBCOMMAND_SHAPES[head]
    options: dict[str, str] = {}
    flags: list[str] = []
    positional: list[str] = []
    k = 0
    while k < len(tail):
        word = tail[k]
        name, eq, value = word.partition("=")
        if name in own:
            if not eq:
                if k + 1 >= len(tail):
                    raise UserError(f"{head} {name} needs a value: %dsh {head} {name} VALUE", code="BAD_FLAG")
                k, value = k + 1, tail[k + 1]
            options[name.lstrip("-")] = value
        elif word.startswith("--") and name in _BY_NAME:
            flags.append(word)
        else:
            positional.append(word)
        k += 1
    # words that can only mean sessions (ids, logs, {variables}) or the subcommand's own option:
    # the line is a subcommand typed wrong, never a prompt sent to the model
    meant = bool(options) or (bool(positional) and all(map(_looks_like_target, positional)))
    if len(positional) > limit:
        if meant:
            raise UserError(f"%dsh {head} takes {_takes(limit)}, not {len(positional)}: {' '.join(positional)}; "
                            f"usage: {SUBCOMMAND_USAGE[head]}", code="BAD_FLAG")
        return  # a prompt that happens to start with the word ("show me the code")
    if head == "compare" and len(positional) != 2:
        if positional and not meant:
            return  # "compare both" is a prompt
        given = f"; got only {positional[0]}" if positional else ""
        raise UserError(f"usage: %dsh compare A B (two session ids or log paths; list them with %dsh sessions){given}",
                        code="BAD_FLAG")
    if head == "fork" and "at" not in options:
        raise UserError("usage: %dsh fork [ID] --at SEQ (the last event of ID to keep)", code="BAD_FLAG")
    for flag in flags:
        name, eq, value = flag.partition("=")
        spec = _BY_NAME[name]
        if spec.metavar is not None and not eq:
            raise UserError(f"{name} after {head} needs {name}=VALUE", code="BAD_FLAG")
        _set_flag(args, spec, value if eq else None)
    args.command, args.target = head, (positional[0] if positional else None)
    args.targets, args.options = positional, options


def _checkpoint_subcommand(args: MagicArgs, head: str, tail: list[str]) -> None:
    """``rewind [N] [flags]``, ``undo [flags]``, ``changes [TURN]``: a line of other words is a prompt
    ("undo the last refactor"); an unknown ``--flag`` or a second number is a usage error. ``rewind``
    takes every spelling of the CLI's ``rewind ID_OR_PATH --to-turn N …`` too: ``--to-turn N``,
    ``--to-turn=N`` and a session id or log path."""
    words: list[str] = []
    for k, w in enumerate(tail):  # `--to-turn N` / `--to-turn=N` as the number N
        if head == "rewind" and w.startswith("--to-turn="):
            value = w.partition("=")[2]
            words.append(value if value.isdigit() else "--to-turn=")
        elif head == "rewind" and w == "--to-turn":
            words.append(tail[k + 1] if k + 1 < len(tail) and tail[k + 1].isdigit() else "--to-turn")
        elif not (head == "rewind" and k > 0 and tail[k - 1] == "--to-turn" and w.isdigit()):
            words.append(w)
    targets = [w for w in words if head == "rewind" and _looks_like_target(w) and not w.startswith("{")]
    words = [w for w in words if w not in targets]
    if any(not w.startswith("--") and not w.isdigit() for w in words):
        return  # prose: a prompt
    numbers = [w for w in words if w.isdigit()]
    flags = [w for w in words if w.startswith("--")]
    allowed = () if head == "changes" else REWIND_FLAGS if head == "rewind" else ("--dry-run", "--force")
    bad = [f for f in flags if f not in allowed]
    if bad or len(numbers) > (0 if head == "undo" else 1) or len(targets) > 1:
        raise UserError(f"usage: {SUBCOMMAND_USAGE[head]}", code="BAD_FLAG")
    args.command, args.target, args.targets = head, None, []
    if targets:
        args.session = targets[0]
    args.options = {"turn": numbers[0]} if numbers else {}
    args.options.update({f.lstrip("-"): "1" for f in flags})


_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")


def interpolate(text: str, namespaces: Sequence[Mapping[str, Any]]) -> str:
    """Replace ``{name}`` / ``{name.attr}`` by ``str(value)``; ``{{``/``}}`` are literal braces."""

    def lookup(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "{{":
            return "{"
        if whole == "}}":
            return "}"
        dotted = match.group(1)
        head, *attrs = dotted.split(".")
        for ns in namespaces:
            if head in ns:
                value = ns[head]
                break
        else:
            raise UserError(
                f"{{{dotted}}} in the prompt names no notebook variable; define {head}, write "
                f"{{{{{dotted}}}}} for literal braces, or use --no-interpolate",
                code="UNKNOWN_VARIABLE",
            )
        for attr in attrs:
            try:
                value = getattr(value, attr)
            except AttributeError:
                raise UserError(f"{{{dotted}}}: {type(value).__name__} has no attribute {attr!r}", code="UNKNOWN_VARIABLE") from None
        try:
            return str(value)
        except Exception as exc:
            raise UserError(f"{{{dotted}}}: str() failed: {exc}", code="UNKNOWN_VARIABLE") from None

    return _PLACEHOLDER.sub(lookup, text)
