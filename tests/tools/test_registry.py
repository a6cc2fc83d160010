"""The registry and the built-in tool definitions as the model sees them."""

from __future__ import annotations

import pytest

from dsh_notebook.errors import UserError
from dsh_notebook.tools import ToolRegistry, builtin_tools
from dsh_notebook.tools.builtin import bash_tool, read_tool
from dsh_notebook.wire.events import ToolSchema


def test_builtins_and_their_argument_names() -> None:
    registry = ToolRegistry(builtin_tools())
    # DESIGN §6's built-ins are all there (a new one passes tests/tools/test_tool_table.py)
    assert {"bash", "edit", "glob", "grep", "read", "write"} <= set(registry.names)
    props = {s.name: s.parameters["properties"] for s in registry.schemas()}
    assert set(props["read"]) == {"file_path", "offset", "limit"}  # type: ignore[arg-type]
    assert set(props["write"]) == {"file_path", "content"}  # type: ignore[arg-type]
    assert set(props["edit"]) == {"file_path", "old_string", "new_string", "replace_all"}  # type: ignore[arg-type]
    assert set(props["bash"]) == {"command", "timeout_ms"}  # type: ignore[arg-type]
    assert set(props["glob"]) == {"pattern"}  # type: ignore[arg-type]
    assert set(props["grep"]) == {"pattern", "path"}  # type: ignore[arg-type]
    read = next(s for s in registry.schemas() if s.name == "read")
    assert read.parameters["required"] == ["file_path"]
    assert "title" not in read.parameters and read.parameters["additionalProperties"] is False


def test_default_policies() -> None:
    tools = {t.name: t for t in builtin_tools()}
    for name in ("read", "glob", "grep"):
        assert tools[name].approval == "allow" and tools[name].is_concurrency_safe(None)
    for name in ("write", "edit", "bash"):
        assert tools[name].approval == "ask" and not tools[name].is_concurrency_safe(None)


def test_schemas_sorted_cached_and_refreshed() -> None:
    registry = ToolRegistry([read_tool])
    first = registry.schemas()
    assert registry.schemas() is first and all(isinstance(s, ToolSchema) for s in first)
    registry.register(bash_tool)
    assert [s.name for s in registry.schemas()] == ["bash", "read"]
    assert registry.unregister("bash") is bash_tool and registry.names == ("read",)
    assert registry.unregister("bash") is None
    assert "read" in registry and len(registry) == 1 and registry.get("nope") is None


def test_duplicates_and_bad_names_are_refused() -> None:
    registry = ToolRegistry([read_tool])
    with pytest.raises(UserError) as info:
        registry.register(read_tool)
    assert info.value.code == "DUPLICATE_TOOL"
    registry.register(read_tool, replace=True)
    from dataclasses import replace

    with pytest.raises(UserError) as info:
        registry.register(replace(read_tool, name="bad name!"))
    assert info.value.code == "BAD_TOOL_NAME"
    assert registry.subset(["read", "missing"]).names == ("read",)
