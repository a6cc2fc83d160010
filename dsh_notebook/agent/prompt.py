"""Request formation, part 1 (seed 001 L6): PromptAssembly, renderPrompt and the two projections.

- :class:`PromptAssembly` — the four collections of one step, gathered from an agent's
  :class:`~dsh_notebook.context.Scope` over built-in defaults: **sections** (→ the system
  prompt), **contexts** (→ the runtime-context user message), **tools** (→ definitions) and
  **variables** (``provider``, ``model``, ``cwd`` built in).
- :func:`render_prompt` — strict ``{{name}}`` interpolation: an unknown or undefined name is a
  coded error, a lone ``{{`` stays literal, substituted values are never rescanned.
- :class:`RuntimeContextProjection` and :class:`SystemPromptProjection` live in
  :mod:`.projections`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import Contribution, Scope
from ..errors import UserError
from ..session.events import ToolSchema

_VAR = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\s*\}\}")

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


@dataclass(frozen=True)
class PromptEnv:
    """What contribution functions receive: the agent's route and workspace for this step."""

    provider: str
    model: str
    cwd: str
    session_id: str = ""
    now_ms: int = field(default_factory=lambda: time.time_ns() // 1_000_000)


@dataclass(frozen=True)
class NamedText:
    name: str
    text: str


def _date(env: PromptEnv) -> str:
    return "Today's date: " + time.strftime("%Y-%m-%d", time.localtime(env.now_ms / 1000))


BUILTIN_SECTIONS: tuple[Contribution, ...] = (
    Contribution("section", "harness:identity", IDENTITY, -100, "builtin"),
    Contribution("section", "harness:tool-guidance", TOOL_GUIDANCE, 100, "builtin"),
)
BUILTIN_CONTEXTS: tuple[Contribution, ...] = (
    Contribution("context", "cwd", lambda env: f"Working directory: {env.cwd}", 0, "builtin"),
    Contribution("context", "date", _date, 10, "builtin"),
    Contribution("context", "model", lambda env: f"Model: {env.provider}:{env.model}", 20, "builtin"),
)
BUILTIN_VARIABLES: dict[str, Callable[[PromptEnv], str | None]] = {
    "provider": lambda env: env.provider,
    "model": lambda env: env.model,
    "cwd": lambda env: env.cwd,
}


def render_prompt(text: str, variables: Mapping[str, str | None]) -> str:
    """Strict ``{{name}}`` interpolation in one pass (values are not rescanned)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in variables:
            raise UserError(f"prompt uses unknown variable {{{{{name}}}}}", code="PROMPT_UNKNOWN_VARIABLE")
        value = variables[name]
        if value is None:
            raise UserError(f"prompt variable {{{{{name}}}}} is undefined", code="PROMPT_UNDEFINED_VARIABLE")
        return value

    return _VAR.sub(sub, text) if "{{" in text else text


@dataclass(frozen=True)
class PromptAssembly:
    """Sections, contexts, tools and variables of one step (seed 001 object 25)."""

    sections: tuple[NamedText, ...]
    contexts: tuple[NamedText, ...]
    tools: tuple[ToolSchema, ...]
    variables: Mapping[str, str | None]

    def render_system(self) -> str:
        """The system prompt: each section rendered, empty ones dropped, joined by blank lines."""
        parts = (render_prompt(s.text, self.variables) for s in self.sections)
        return "\n\n".join(p for p in parts if p.strip())

    def rendered_contexts(self) -> list[NamedText]:
        out = [NamedText(c.name, render_prompt(c.text, self.variables)) for c in self.contexts]
        return [c for c in out if c.text.strip()]

    def describe(self) -> dict[str, Any]:
        return {
            "sections": [s.name for s in self.sections],
            "contexts": [c.name for c in self.contexts],
            "tools": [t.name for t in self.tools],
            "variables": dict(self.variables),
        }


def _text_of(item: Contribution, env: PromptEnv) -> str:
    value = item.value
    return str(value(env)) if callable(value) else str(value)


def _overlay(builtins: Sequence[Contribution], scoped: Sequence[Contribution]) -> list[Contribution]:
    names = {c.name for c in scoped}
    merged = [c for c in builtins if c.name not in names] + list(scoped)
    return sorted(merged, key=lambda c: (c.order, c.name))


def collect_assembly(
    scope: Scope | None,
    env: PromptEnv,
    *,
    tools: Sequence[ToolSchema] = (),
    include_runtime_context: bool = True,
) -> PromptAssembly:
    """Gather the assembly an agent sees: built-ins, overlaid by its scope (nearer wins by name).

    ``tools`` are the schemas the agent's tool registry offers (scope tools shadow them by name).
    """
    sections = _overlay(BUILTIN_SECTIONS, scope.sections() if scope else [])
    contexts = _overlay(BUILTIN_CONTEXTS, scope.contexts() if scope else []) if include_runtime_context else []
    var_fns: dict[str, Callable[[Any], str | None]] = dict(BUILTIN_VARIABLES)
    schemas = {t.name: t for t in tools}
    if scope is not None:
        var_fns.update(scope.variables())
        for tool in scope.tools():
            schemas[tool.name] = _schema_of(tool)
    return PromptAssembly(
        sections=tuple(NamedText(s.name, _text_of(s, env)) for s in sections),
        contexts=tuple(NamedText(c.name, _text_of(c, env)) for c in contexts),
        tools=tuple(schemas[name] for name in sorted(schemas)),
        variables={name: fn(env) for name, fn in var_fns.items()},
    )


_schema_cache: dict[int, tuple[Any, ToolSchema]] = {}


def _schema_of(tool: Any) -> ToolSchema:
    hit = _schema_cache.get(id(tool))
    if hit is None or hit[0] is not tool:
        hit = (tool, tool.schema())
        _schema_cache[id(tool)] = hit
    return hit[1]


__all__ = [
    "BUILTIN_CONTEXTS",
    "BUILTIN_SECTIONS",
    "BUILTIN_VARIABLES",
    "NamedText",
    "PromptAssembly",
    "PromptEnv",
    "collect_assembly",
    "render_prompt",
]

from .projections import (  # noqa: E402  (re-exported: the seed names them with the assembly)
    CLEARED,
    SNAPSHOT_HEADER,
    RuntimeContextProjection,
    SystemPromptProjection,
)

__all__ += ["CLEARED", "SNAPSHOT_HEADER", "RuntimeContextProjection", "SystemPromptProjection"]
