"""The shapes of the command registry: a :class:`Command` with its :class:`Arg` words and its
:class:`Flag` options, each saying on which surface it exists — the CLI (``python -m
dsh_notebook``), the ``%dsh`` line, or both.

A flag is declared once, with everything both surfaces and the docs need: its name and value
(``metavar``, ``type``, ``choices``, ``bounds``), its help (``%dsh`` may word it for a cell:
``dsh_help``), the environment variable behind its default, the check both surfaces apply to its
value (``check``, the same coded error everywhere) and the session option that value sets
(``option``). A flag shared by several commands is one object; :meth:`Flag.on` narrows it for
one command (a surface, a help).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

Surface = Literal["cli", "dsh"]
BOTH: frozenset[Surface] = frozenset(("cli", "dsh"))
CLI: frozenset[Surface] = frozenset(("cli",))
DSH: frozenset[Surface] = frozenset(("dsh",))

Values = Literal["", "session", "model", "turn"]
"""What completion offers for a value beyond its ``choices``: session ids, model ids, nothing."""

Check = Callable[[Any, str], Any]
"""``check(value, flag_name)``: the value as the program uses it, or a coded ``UserError``."""


@dataclass(frozen=True)
class Flag:
    name: str  # "--max-steps"
    help: str  # the CLI's help, and ``%dsh``'s unless ``dsh_help``
    metavar: str | None = None  # the value's name; None: a switch
    dest: str = ""  # the attribute it parses into (default: the name, - as _)
    short: str = ""  # "-o"
    type: Callable[[str], Any] | None = None  # the CLI converts with it; %dsh keeps the text for ``check``
    choices: tuple[str, ...] = ()
    default: Any = None
    required: bool = False  # on the CLI
    repeat: bool = False  # may be given again, the values collected in a list
    env: str = ""  # the environment variable its default comes from
    bounds: tuple[float, float] | None = None  # the values ``check`` accepts, both ends included …
    above_low: bool = False  # … but the low end itself (a positive number of seconds: 0 < value)
    check: Check | None = None
    option: str = ""  # the session option (create / resume) its checked value sets
    values: Values = ""
    surfaces: frozenset[Surface] = BOTH
    dsh_help: str = ""
    example: str = ""  # a value it accepts (the conformance tests and the docs use it)
    group: str = ""  # flags of one group exclude each other (CLI)

    def __post_init__(self) -> None:
        if not self.dest:
            object.__setattr__(self, "dest", self.name.lstrip("-").replace("-", "_"))

    @property
    def takes_value(self) -> bool:
        return self.metavar is not None

    def on(self, surfaces: frozenset[Surface] | None = None, *, help: str | None = None,
           dsh_help: str | None = None, **changes: Any) -> Flag:
        """This flag as one command has it: on fewer surfaces, worded for it."""
        if help is not None:
            changes["help"] = help
        if dsh_help is not None:
            changes["dsh_help"] = dsh_help
        return replace(self, surfaces=surfaces if surfaces is not None else self.surfaces, **changes)

    def help_on(self, surface: Surface) -> str:
        return (self.dsh_help or self.help) if surface == "dsh" else self.help

    def checked(self, value: Any) -> Any:
        """The value as the program uses it (``check`` applied; a coded error names the flag)."""
        return value if self.check is None or value is None else self.check(value, self.name)


@dataclass(frozen=True)
class Arg:
    """A positional word. On ``%dsh`` a session word may be left out (the current session)."""

    name: str  # the attribute it parses into
    help: str
    metavar: str = ""
    nargs: str | None = None  # argparse's: None (one), "?", "+", "..." (the rest, as typed)
    choices: tuple[str, ...] = ()
    default: Any = None
    values: Values = ""
    surfaces: frozenset[Surface] = BOTH

    def on(self, surfaces: frozenset[Surface]) -> Arg:
        return replace(self, surfaces=surfaces)


@dataclass(frozen=True)
class Command:
    name: str  # "show", "policy check": the words that name it (the CLI's, and %dsh's)
    help: str  # one line
    description: str = ""  # the CLI's --help text, where one line is not enough
    args: tuple[Arg, ...] = ()
    flags: tuple[Flag, ...] = ()
    surfaces: frozenset[Surface] = BOTH
    runs: str = ""  # the CLI's handler, "module:function" taking the parsed namespace, returning the exit code
    dsh_lines: tuple[tuple[str, str], ...] = ()  # %dsh --help: (usage after "%dsh ", what it does)
    dsh_usage: str = ""  # the usage a %dsh error quotes
    dsh_prompt: bool = False  # on %dsh it is the prompt itself (no word): ``run``

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.name.split())

    def on(self, surface: Surface) -> bool:
        return surface in self.surfaces

    def flags_on(self, surface: Surface) -> tuple[Flag, ...]:
        return tuple(f for f in self.flags if surface in f.surfaces)

    def args_on(self, surface: Surface) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if surface in a.surfaces)

    def flag(self, name: str) -> Flag | None:
        return next((f for f in self.flags if name in (f.name, f.short)), None)
