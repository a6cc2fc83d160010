"""Request formation, part 1 (seed 001 L6): PromptAssembly, renderPrompt and the two projections.

- :class:`PromptAssembly` — the four collections of one step, gathered from an agent's
  :class:`~dsh_notebook.context.Scope` over built-in defaults: **sections** (→ the system
  prompt), **contexts** (→ the runtime-context user message, placed before the step's prompt),
  **tools** (→ definitions: exactly the turn's ``--tools``, the Scope's tools included) and
  **variables** (``provider``, ``model``, ``cwd`` built in). A section given as ``fn(env)`` sees
  the tools offered (``env.tools``): the tool guidance is left out of a turn offered none.
  **Compact** (a small model's plain chat turn, :func:`~dsh_notebook.models.routing.compact_prompt`):
  a short identity, the runtime context as the system prompt's last lines, no message of its own.
- :func:`render_prompt` — strict ``{{name}}`` interpolation: an unknown or undefined name is a
  coded error, a lone ``{{`` stays literal, substituted values are never rescanned.
- the built-in sections, contexts and variables (and :class:`PromptEnv`, what a contribution
  function receives) live in :mod:`.prompt_defaults`; :class:`RuntimeContextProjection` and
  :class:`SystemPromptProjection` in :mod:`.projections`.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import JsonValue

from ..context import Contribution, Scope
from ..errors import UserError
from ..wire.events import ToolSchema
from .prompt_defaults import (
    BUILTIN_CONTEXTS,
    BUILTIN_SECTIONS,
    BUILTIN_VARIABLES,
    COMPACT_CONTEXTS,
    COMPACT_IDENTITY,
    COMPACT_SECTIONS,
    RUNTIME_SECTION,
    PromptEnv,
)

_VAR = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\s*\}\}")

@dataclass(frozen=True)
class NamedText:
    name: str
    text: str


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
    contexts_in_system: bool = False  # the compact prompt: the runtime context is in the system prompt

    def render_system(self) -> str:
        """The system prompt: each section rendered, empty ones dropped, joined by blank lines."""
        return "\n\n".join(t.text for t in _render(self.sections, tuple(self.variables.items())))

    def rendered_contexts(self) -> list[NamedText]:
        """The runtime-context sections, rendered, empty ones dropped."""
        return list(_render(self.contexts, tuple(self.variables.items())))

    def describe(self) -> dict[str, JsonValue]:
        return {
            "sections": [s.name for s in self.sections],
            "contexts": [c.name for c in self.contexts],
            "tools": [t.name for t in self.tools],
            "variables": dict(self.variables),
        }


@functools.lru_cache(maxsize=64)
def _render(items: tuple[NamedText, ...], variables: tuple[tuple[str, str | None], ...]) -> tuple[NamedText, ...]:
    """Render and drop empty texts; memoised (pure), so an unchanged prompt costs a lookup."""
    values = dict(variables)
    out = (NamedText(i.name, render_prompt(i.text, values)) for i in items)
    return tuple(i for i in out if i.text.strip())


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
    offered: Collection[str] | None = None,
    include_runtime_context: bool = True,
    compact: bool = False,
) -> PromptAssembly:
    """Gather the assembly an agent sees: built-ins, overlaid by its scope (nearer wins by name).

    ``tools`` are the schemas the agent's tool registry offers (scope tools shadow them by name);
    ``offered`` (the turn's ``--tools``: ``None`` every tool, ``()`` none) filters both — a
    notebook's or an MCP server's tools are offered only when named, like the built-ins.
    ``compact``: the compact prompt (see the module): no context message (``contexts_in_system``).
    """
    sections, contexts, var_fns, scoped_tools = _visible(scope, compact)
    if not include_runtime_context:
        contexts = []
    if scoped_tools:
        by_name = {t.name: t for t in tools}
        by_name.update((t.name, _schema_of(t)) for t in scoped_tools)
        tools = tuple(by_name[name] for name in sorted(by_name))
    if offered is not None:
        tools = tuple(t for t in tools if t.name in offered)
    env = replace(env, tools=frozenset(t.name for t in tools))
    texts = tuple(NamedText(c.name, _text_of(c, env)) for c in contexts)
    named = [NamedText(s.name, _text_of(s, env)) for s in sections]
    if compact:  # the context lines close the system prompt; each is rendered like a section
        named.append(NamedText(RUNTIME_SECTION, "\n".join(t.text for t in texts if t.text.strip())))
        texts = ()
    return PromptAssembly(
        sections=tuple(named),
        contexts=texts,
        tools=tuple(tools),
        variables={name: fn(env) for name, fn in var_fns.items()},
        contexts_in_system=compact,
    )


_Visible = tuple[list[Contribution], list[Contribution], dict[str, Callable[[Any], "str | None"]], list[Any]]
_visible_cache: weakref.WeakKeyDictionary[Scope, dict[bool, tuple[int, _Visible]]] = weakref.WeakKeyDictionary()


def _visible(scope: Scope | None, compact: bool = False) -> _Visible:
    """Built-ins overlaid by the scope's contributions; recomputed only when the scope changed."""
    sections, contexts = (COMPACT_SECTIONS, COMPACT_CONTEXTS) if compact else (BUILTIN_SECTIONS, BUILTIN_CONTEXTS)
    if scope is None:
        return _overlay(sections, []), _overlay(contexts, []), dict(BUILTIN_VARIABLES), []
    hits = _visible_cache.setdefault(scope, {})
    hit = hits.get(compact)
    if hit is not None and hit[0] == scope.ctx.version:
        return hit[1]
    var_fns: dict[str, Callable[[Any], str | None]] = dict(BUILTIN_VARIABLES)
    var_fns.update(scope.variables())
    value = (_overlay(sections, scope.sections()), _overlay(contexts, scope.contexts()), var_fns, scope.tools())
    hits[compact] = (scope.ctx.version, value)
    return value


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
    "COMPACT_IDENTITY",
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
