"""What the flags of a run mean, the same for ``python -m dsh_notebook run`` and a ``%dsh`` line.

:func:`session_options` turns the flags given into the session options of ``session/create`` /
``session/resume`` (each flag's :attr:`~.spec.Flag.check`, in the registry's order: the first bad
value is the error, coded, before any session is made); :func:`checked_flags` is every given flag
of a command as the program uses it (what the conformance test holds the two surfaces to);
:func:`apply_process_flags` does what a flag does to this process (``--context-window`` sets
``DSH_CONTEXT_WINDOW``, ``--no-network`` turns the sandbox's network off).
"""

from __future__ import annotations

import os
from typing import Any

from .checks import BreakPlan, break_plan
from .spec import Command, Flag
from .table import command

__all__ = ["BreakPlan", "apply_process_flags", "break_plan", "checked_flags", "given", "session_options"]


def given(values: Any, flag: Flag) -> Any:
    """The value a flag was given in a parsed namespace (``None`` when it was not: an empty
    repeatable list and an unset switch count as not given)."""
    value = getattr(values, flag.dest, None)
    if value is False or value == []:
        return None
    return value


def checked_flags(values: Any, cmd: Command | str = "run", surface: str = "cli") -> dict[str, Any]:
    """Every flag of ``cmd`` on ``surface`` that ``values`` gives, checked: ``{dest: value}``."""
    spec = command(cmd) if isinstance(cmd, str) else cmd
    out: dict[str, Any] = {}
    for flag in spec.flags:
        if surface in flag.surfaces and (value := given(values, flag)) is not None:
            out[flag.dest] = flag.checked(value)
    return out


def session_options(values: Any) -> dict[str, Any]:
    """The session options the flags of a run set (``--max-steps``, ``--max-time``, ``--rules``,
    ``--mode``, ``--max-tokens``, ``--option``, ``--tools``, ``--max-repeats``, the timeouts):
    only those given, each checked."""
    out: dict[str, Any] = {}
    for flag in command("run").flags:
        if flag.option and (value := given(values, flag)) is not None:
            out[flag.option] = flag.checked(value)
    return out


def apply_process_flags(values: Any) -> None:
    """``--context-window N`` becomes this process's window (``DSH_CONTEXT_WINDOW``, read by the
    host for every request); ``--no-network`` turns the sandbox's network off for this process."""
    from .flags import CONTEXT_WINDOW

    window = given(values, CONTEXT_WINDOW)
    if window is not None:
        os.environ[CONTEXT_WINDOW.env] = str(CONTEXT_WINDOW.checked(window))
    if getattr(values, "no_network", False):
        from ..tools.confine import configure

        configure(network=False)
