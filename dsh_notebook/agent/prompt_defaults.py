"""The prompt's built-in defaults (seed 001 L6), under what an agent's Scope contributes: the
identity and the tool guidance (sections), the working directory, the date and the model (runtime
contexts), ``provider`` / ``model`` / ``cwd`` (variables), and their compact variants for a small
model's plain chat turn. :class:`PromptEnv` is what a contribution given as ``fn(env)`` receives.
:mod:`.prompt` overlays them with the Scope's and assembles the step's prompt.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..context import Contribution

IDENTITY = (
    "You are dsh, an AI agent working inside a Jupyter notebook through the dsh_notebook harness. "
    "You run on {{provider}}:{{model}} and your workspace is {{cwd}}."
)
TOOL_GUIDANCE = (
    "Act through the tools. Read a file before you change it, prefer `edit` for small changes, "
    "and run commands with `bash`. Paths are relative to the workspace. A tool result is the only "
    "evidence of what happened: report results honestly, including failures. \"The tool ran\", "
    "\"the tests passed\" and \"the goal is achieved\" are three different claims."
)
COMPACT_IDENTITY = "You are dsh, a helpful AI assistant."
RUNTIME_SECTION = "harness:runtime-context"  # the compact prompt's context lines (last in the system prompt)


@dataclass(frozen=True)
class PromptEnv:
    """What contribution functions receive: the agent's route and workspace for this step."""

    provider: str
    model: str
    cwd: str
    session_id: str = ""
    now_ms: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    tools: frozenset[str] | None = None  # the names offered this step (set by collect_assembly)

    def offers(self, name: str | None = None) -> bool:
        """Whether the step offers ``name`` (any tool at all without a name); unknown: yes."""
        if self.tools is None:
            return True
        return bool(self.tools) if name is None else name in self.tools


def _date(env: PromptEnv) -> str:
    return _date_of_minute(env.now_ms // 60_000)


@functools.lru_cache(maxsize=4)
def _date_of_minute(minute: int) -> str:
    """The local date of a minute (asked every step: the time-zone lookup once a minute)."""
    return "Today's date: " + time.strftime("%Y-%m-%d", time.localtime(minute * 60))


def _tool_guidance(env: PromptEnv) -> str:
    return TOOL_GUIDANCE if env.offers() else ""  # a plain chat turn (--tools none): no word of tools


BUILTIN_SECTIONS: tuple[Contribution, ...] = (
    Contribution("section", "harness:identity", IDENTITY, -100, "builtin"),
    Contribution("section", "harness:tool-guidance", _tool_guidance, 100, "builtin"),
)
BUILTIN_CONTEXTS: tuple[Contribution, ...] = (
    Contribution("context", "cwd", lambda env: f"Working directory: {env.cwd}", 0, "builtin"),
    Contribution("context", "date", _date, 10, "builtin"),
    Contribution("context", "model", lambda env: f"Model: {env.provider}:{env.model}", 20, "builtin"),
)
# the working directory after the date and the model (SmolLM2: right after the identity it read as part of it)
COMPACT_SECTIONS = (Contribution("section", "harness:identity", COMPACT_IDENTITY, -100, "builtin"), BUILTIN_SECTIONS[1])
COMPACT_CONTEXTS = tuple(replace(c, order=30) if c.name == "cwd" else c for c in BUILTIN_CONTEXTS)
BUILTIN_VARIABLES: dict[str, Callable[[PromptEnv], str | None]] = {
    "provider": lambda env: env.provider,
    "model": lambda env: env.model,
    "cwd": lambda env: env.cwd,
}
