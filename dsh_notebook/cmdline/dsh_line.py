"""Parsing of the ``%dsh`` line: leading ``--flags``, then free text (the prompt or a subcommand).

IPython does not expand the line (``@no_var_expand``), and we do not run it through ``shlex`` or
``argparse``: only the leading flags are tokenised, so the prompt keeps its quotes, apostrophes,
dollar signs and spacing exactly as typed. ``--`` ends the flags explicitly (``%dsh -- --new is
a flag`` sends ``--new is a flag`` as the prompt, and ``%dsh -- show me`` is a prompt, not the
``show`` subcommand).

The flags, the subcommands, their words and their own options all come from the command registry
(:mod:`.table`), the same declarations the CLI's parser is built from: a flag ``%dsh`` takes is the
CLI's flag, with the same name, value and check. Flag values stay text here; :meth:`Flag.checked`
(:mod:`.options`) turns them into what the program uses, with the CLI's coded errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .spec import Command, Flag
from .table import MCP_ACTIONS, command, dsh_words, line_flags

FLAGS: tuple[Flag, ...] = line_flags()
_BY_NAME: dict[str, Flag] = {spec.name: spec for spec in FLAGS}
_BY_NAME.update({spec.short: spec for spec in FLAGS if spec.short})


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
    no_network: bool = False  # --no-network: this kernel's sandboxed commands from now on
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
    command: str = "prompt"  # "prompt", or a %dsh command of the registry ("show", "policy check")
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


def _set_flag(args: MagicArgs, spec: Flag, value: str | None) -> None:
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
    if body is None and not explicit_end:  # `%dsh sessions;`: the `;` silences the line (IPython's), no word of it
        _detect_subcommand(args, rest.removesuffix(";").rstrip())
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


_TARGET = re.compile(r"^(s_[0-9A-Za-z_-]+|\{[A-Za-z_][\w.]*\}|\S+\.jsonl)$")
CHECKPOINT_COMMANDS = ("rewind", "undo", "changes")  # their own spellings: N, --to-turn N, switches


def usage(name: str) -> str:
    """The usage a ``%dsh`` error quotes for a subcommand."""
    return command(name).dsh_usage


def _own(cmd: Command) -> dict[str, Flag]:
    """A subcommand's own flags that take a value (``fork --at SEQ``): ``--at SEQ`` or ``--at=SEQ``."""
    return {f.name: f for f in cmd.flags_on("dsh") if f.takes_value}


def _looks_like_target(word: str) -> bool:
    """A session id (``s_…``), a log path (``….jsonl``) or a ``{variable}`` holding one."""
    return bool(_TARGET.match(word))


def _takes(limit: int) -> str:
    return "no session id" if limit == 0 else "one session id" if limit == 1 else f"{limit} session ids"


def _head(words: list[str]) -> tuple[str, ...] | None:
    """The words of the ``%dsh`` subcommand this line starts with (``policy check`` before ``policy``)."""
    for named in dsh_words():
        if tuple(words[: len(named)]) == named:
            return named
    return None


def _detect_subcommand(args: MagicArgs, rest: str) -> None:
    """A whole line like ``stop``, ``resume ID``, ``show [--inspect] [ID]``, ``fork [ID] --at SEQ``."""
    words = rest.split()
    if words and words[0] == "mcp" and (len(words) == 1 or words[1] in (*MCP_ACTIONS, "--help")):
        args.command, args.text = "mcp", rest[3:].strip()  # `%dsh mcp add NAME -- CMD …`: parsed later
        args.help = words[1:] == ["--help"]
        return
    named = _head(words)
    if named is None:
        return
    head, tail = " ".join(named), words[len(named):]
    if head in CHECKPOINT_COMMANDS:
        _checkpoint_subcommand(args, head, tail)
        return
    if head == "sessions" and tail and tail[0].partition("=")[0] == "--search":
        first = tail[0].partition("=")[2]
        args.search = " ".join([first, *tail[1:]] if first else tail[1:]).strip()
        if not args.search:
            raise UserError("usage: %dsh sessions --search TEXT", code="BAD_FLAG")
        args.command = "sessions"
        return
    cmd = command(head)
    limit, own = len(cmd.args_on("dsh")), _own(cmd)
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
            if own[name].choices and value not in own[name].choices:
                raise UserError(f"{head} {name} must be one of {', '.join(own[name].choices)}, not {value!r}",
                                code="BAD_FLAG")
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
                            f"usage: {usage(head)}", code="BAD_FLAG")
        return  # a prompt that happens to start with the word ("show me the code")
    if head == "compare" and len(positional) != 2 and "--help" not in flags:
        if positional and not meant:
            return  # "compare both" is a prompt
        given = f"; got only {positional[0]}" if positional else ""
        raise UserError(f"usage: %dsh compare A B (two session ids or log paths; list them with %dsh sessions){given}",
                        code="BAD_FLAG")
    for flag in flags:
        name, eq, value = flag.partition("=")
        spec = _BY_NAME[name]
        if spec.metavar is not None and not eq:
            raise UserError(f"{name} after {head} needs {name}=VALUE", code="BAD_FLAG")
        _set_flag(args, spec, value if eq else None)
    missing = [f for f in cmd.flags_on("dsh") if f.required and f.name.lstrip("-") not in options]
    if missing and not args.help:
        raise UserError(f"usage: {usage(head)} ({missing[0].help_on('dsh')})", code="BAD_FLAG")
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
    if "--help" in words:  # `%dsh rewind --help`: the command's help
        args.help, words = True, [w for w in words if w != "--help"]
    if any(not w.startswith("--") and not w.isdigit() for w in words):
        return  # prose: a prompt
    numbers = [w for w in words if w.isdigit()]
    flags = [w for w in words if w.startswith("--")]
    allowed = {f.name for f in command(head).flags_on("dsh") if not f.takes_value}
    bad = [f for f in flags if f not in allowed]
    if bad or len(numbers) > (0 if head == "undo" else 1) or len(targets) > 1:
        raise UserError(f"usage: {usage(head)}", code="BAD_FLAG")
    args.command, args.target, args.targets = head, None, []
    if targets:
        args.session = targets[0]
    args.options = {"turn": numbers[0]} if numbers else {}
    args.options.update({f.lstrip("-"): "1" for f in flags})


def flag_values(args: MagicArgs) -> dict[str, Any]:
    """The flags a parsed line gave, by ``dest``, as the CLI's parser holds them: the line's flags,
    a subcommand's own (``fork --at``), switches as ``True``, ``rewind N`` as ``--to-turn N``.
    What the conformance test holds against the CLI's namespace."""
    name = "run" if args.command == "prompt" else args.command
    out: dict[str, Any] = {}
    for flag in (*FLAGS, *command(name).flags_on("dsh")):
        key = flag.name.lstrip("-")
        if key in args.options:
            out[flag.dest] = args.options[key] if flag.takes_value else True
        elif getattr(args, flag.dest, None) not in (None, False, []):
            out[flag.dest] = getattr(args, flag.dest)
    if args.command == "rewind" and "turn" in args.options:
        out["to_turn"] = args.options["turn"]
    return out
