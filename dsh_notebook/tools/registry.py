"""The tool registry: the tools an agent can call, and their definitions as the model sees them.

A registry is a plain name → :class:`Tool` map with a cached, name-sorted tuple of
:class:`ToolSchema` (sorted so the request's tool list — and so the provider's prompt cache —
does not depend on registration order). Which tools an agent *sees* is decided by its Scope
(``dsh_notebook.context``); the registry is what that scope is built from.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import UserError
from ..wire.events import ToolSchema
from .base import Tool, ToolSpec


class ToolRegistry:
    """Tools by name, with their schemas."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._schemas: tuple[ToolSchema, ...] | None = None
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool, *, replace: bool = False) -> Tool:
        """Add ``tool``. A second tool with the same name is refused unless ``replace``."""
        if not tool.name or not tool.name.replace("_", "").replace("-", "").isalnum():
            raise UserError(
                f"tool name {tool.name!r} must be letters, digits, '_' or '-'", code="BAD_TOOL_NAME"
            )
        if tool.name in self._tools and not replace:
            raise UserError(f"a tool named {tool.name!r} is already registered", code="DUPLICATE_TOOL")
        self._tools[tool.name] = tool
        self._schemas = None
        return tool

    def unregister(self, name: str) -> Tool | None:
        """Remove and return the tool called ``name`` (``None`` if there was none)."""
        tool = self._tools.pop(name, None)
        if tool is not None:
            self._schemas = None
        return tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def schemas(self) -> tuple[ToolSchema, ...]:
        """Every tool's definition, sorted by name (cached until the registry changes)."""
        if self._schemas is None:
            self._schemas = tuple(self._tools[n].schema() for n in sorted(self._tools))
        return self._schemas

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._tools))

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A new registry with only the named tools (unknown names are ignored)."""
        return ToolRegistry(self._tools[n] for n in names if n in self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter([self._tools[n] for n in sorted(self._tools)])

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"<ToolRegistry {', '.join(self.names)}>"


def builtin_tools() -> list[Tool]:
    """The built-in tools (:data:`~.builtin.BUILTIN_TOOLS`: read, write, edit, bash, grep, glob; a
    fresh list each call)."""
    from .builtin import BUILTIN_TOOLS

    return list(BUILTIN_TOOLS)


def known_tools() -> dict[str, ToolSpec]:
    """Every tool this package defines, by name, in table order: the built-ins, then the tools a
    notebook kernel adds (:mod:`.kernel_tools`, declared without their bodies). ``exit_plan_mode``
    (:mod:`.plan`) is not here: plan mode offers it, and its section reads :func:`reads_phrase`."""
    from .kernel_tools import KERNEL_TOOLS

    return {t.name: t for t in (*builtin_tools(), *KERNEL_TOOLS)}


def known_tool(name: str) -> ToolSpec | None:
    """The tool this package defines under ``name`` (what a saved log's call is judged by)."""
    return known_tools().get(name)


def is_read_only(name: str) -> bool:
    """Whether a call of the tool named ``name`` only reads (``False`` for a tool not known here:
    an MCP or custom tool may change anything)."""
    tool = known_tool(name)
    return tool is not None and tool.read_only


def reads_phrase() -> str:
    """What runs in plan mode, as the prompt and the refusals name it: every read-only tool, and
    read-only bash (``read, grep, glob, notebook_read, inspect_var and read-only bash``)."""
    tools = known_tools().values()
    reads = [t.name for t in tools if t.read_only]
    return ", ".join(reads) + (" and read-only bash" if any(t.effect == "bash" for t in tools) else "")
