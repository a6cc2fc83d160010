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
from .base import Tool


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
    """The built-in tools: read, write, edit, bash, glob, grep (a fresh list each call)."""
    from .builtin import bash_tool, edit_tool, glob_tool, grep_tool, read_tool, write_tool

    return [read_tool, write_tool, edit_tool, bash_tool, glob_tool, grep_tool]
