"""The checks of flag values both command lines apply, each a coded ``UserError`` naming the flag.

Most are the program's own parsers (``parse_max_tokens``, ``parse_mode``, ``parse_when`` …) shared
with the environment variables; the few here are a flag's own: a context window, a rules file, the
debugger's stages, and the rules that tie the debugger's flags together (:func:`break_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import parse_max_steps, parse_max_time, positive_int
from ..errors import UserError
from ..models.request_options import parse_options, parse_tools, tools_text
from ..wire.stages import STAGE_KEYS


def window(value: Any, name: str) -> int:
    """A context window: a positive number of tokens (``BAD_FLAG``)."""
    return positive_int(value, name, what="a positive number of tokens", code="BAD_FLAG")


def window_text(raw: str) -> int:
    """``--context-window`` as the CLI converts it while parsing (a bad value: exit 2)."""
    return window(raw, "--context-window")


def seq(value: Any, name: str) -> int:
    """An event's seq (``fork --at``): a whole number (``BAD_FORK_POINT``)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise UserError(f"{name} {value!r} is not a seq (a whole number)", code="BAD_FORK_POINT") from None


def turn(value: Any, name: str) -> int:
    """A turn number (``--to-turn``, ``--diff``): a whole number (``BAD_FLAG``)."""
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    raise UserError(f"{name} {value!r} is not a turn (a whole number)", code="BAD_FLAG")


def steps(value: Any, name: str) -> int:
    """A step budget for a session: ``0`` (no limit) stays ``0`` so it replaces the default."""
    return parse_max_steps(value, name) or 0


def seconds_budget(value: Any, name: str) -> float:
    return parse_max_time(value, name) or 0


def rules_file(value: Any, name: str) -> str:
    """A rules file as an absolute path (the host reads it; a relative one means here, now)."""
    if not str(value).strip():
        raise UserError(f"{name} needs a file (a JSON list of {{tool, pattern, action}})", code="BAD_FLAG")
    return str(Path(str(value)).expanduser().resolve())


def options(values: Any, name: str) -> dict[str, Any]:
    """``--option KEY=VALUE`` given again and again → one checked dict."""
    return parse_options(list(values) if isinstance(values, (list, tuple)) else [values], name)


def tools(value: Any, name: str) -> str:
    return tools_text(parse_tools(value, name))


def mode(value: Any, name: str) -> str:
    from ..tools.modes import parse_mode

    return parse_mode(value, name)


def when(value: Any, name: str) -> Any:
    from ..agent.breakwhen import parse_when

    return parse_when(value)  # BAD_BREAK_WHEN saying where


def run_to(value: Any, name: str) -> tuple[str, str]:
    from ..agent.runto import parse_run_to

    return parse_run_to(value)  # BAD_RUN_TO


def stages(text: str | None, name: str = "--break") -> list[str]:
    """``"03,06"`` / ``"3 6"`` / ``"all"`` → ``["03", "06"]``; ``BAD_FLAG`` for anything else."""
    if text is None:
        return []
    if text.strip().lower() == "all":
        return list(STAGE_KEYS)
    out = []
    for part in text.replace(",", " ").split():
        stage = part.zfill(2)
        if stage not in STAGE_KEYS:
            raise UserError(f"{name} {text!r}: {part!r} is not a stage; the stages are 01..06 (or all)",
                            code="BAD_FLAG")
        out.append(stage)
    if not out:  # "--break ," / "--break ' '": no stage named, not "no breakpoints"
        raise UserError(f"{name} {text!r} names no stage; the stages are 01..06 (e.g. --break 03,06, or all)",
                        code="BAD_FLAG")
    return sorted(set(out))


def tool_names(value: Any, name: str) -> list[str]:
    names = str(value).replace(",", " ").split()
    if not names:  # "--break-tools ," must not mean every tool
        raise UserError(f"{name} {value!r} names no tool (e.g. {name} bash,edit)", code="BAD_FLAG")
    return names


@dataclass(frozen=True)
class BreakPlan:
    """The agent debugger a run asked for: breakpoints (stages, for some tools, when a condition
    holds) and a run-to target."""

    stages: list[str]
    tools: list[str] | None = None
    when: str | None = None
    run_to: tuple[str, str] | None = None

    def __bool__(self) -> bool:
        return bool(self.stages) or self.run_to is not None


def break_plan(values: Any) -> BreakPlan:
    """``--break STAGES [--break-tools NAMES] [--break-when EXPR] [--run-to 'N cK']`` checked
    before anything runs (the CLI and ``%dsh`` alike)."""
    given = {k: getattr(values, k, None) for k in ("breakpoints", "break_tools", "break_when", "run_to")}
    chosen = stages(given["breakpoints"])
    if given["break_when"] is not None:
        if not chosen:
            raise UserError("--break-when needs --break STAGES (e.g. --break 03 --break-when 'name==bash')",
                            code="BAD_FLAG")
        when(given["break_when"], "--break-when")
    target = run_to(given["run_to"], "--run-to") if given["run_to"] is not None else None
    if given["break_tools"] is not None and not chosen:
        raise UserError("--break-tools needs --break STAGES (e.g. --break 03 --break-tools bash)", code="BAD_FLAG")
    names = tool_names(given["break_tools"], "--break-tools") if given["break_tools"] is not None else None
    return BreakPlan(chosen, names, given["break_when"], target)
