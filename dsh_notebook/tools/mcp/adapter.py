"""An MCP server's tool as a dsh :class:`~dsh_notebook.tools.base.Tool` (the tool adapter).

The model sees the server's own ``inputSchema`` as the parameters; the runtime validates the
arguments against that schema (JSON Schema, via ``jsonschema``) before policy and approval, like
any built-in. Approval is ``ask`` unless the tool is annotated ``readOnlyHint`` *and* the user
trusts read-only hints (``DSH_MCP_TRUST_READONLY=1`` or the server's ``trustReadOnly``).
Results: text blocks and structured content become the tool result's text; images, audio and
resources become a short description (never raw base64 in the model's context).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue, RootModel, model_validator

from ...wire.events import ToolSchema
from ..base import PolicyDecision, Tool, ToolContext, ToolOutput

MAX_RESOURCE_TEXT = 20_000
CallFn = Callable[[str, dict[str, JsonValue], ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class McpTool(Tool):
    """A Tool whose parameters are the server's JSON schema, verbatim."""

    input_schema: dict[str, JsonValue] | None = None
    read_only_hint: bool = False  # what the server claims (annotations.readOnlyHint); ``read_only``: if trusted

    def schema(self) -> ToolSchema:
        origin = self.origin or (None, None)
        return ToolSchema(
            name=self.name, description=self.description, parameters=self.input_schema or {"type": "object"},
            server=origin[0], tool=origin[1],
        )


def _problem(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(arguments)"
    return f"{where}: {error.message}"


def arguments_model(tool_name: str, schema: dict[str, JsonValue]) -> type[RootModel[dict[str, JsonValue]]]:
    """A pydantic model that accepts a JSON object valid against ``schema`` (else a clear error)."""
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
        validator: Any = cls(schema)
    except SchemaError:
        validator = None  # the server's schema is broken: the server itself will judge the call

    class Arguments(RootModel[dict[str, JsonValue]]):
        @model_validator(mode="after")
        def _valid(self) -> Arguments:
            if validator is not None:
                errors = sorted(validator.iter_errors(self.root), key=lambda e: list(e.absolute_path))
                if errors:
                    raise ValueError("; ".join(_problem(e) for e in errors[:5]))
            return self

    Arguments.__name__ = Arguments.__qualname__ = f"{tool_name}_arguments"
    return Arguments


def make_tool(
    *, name: str, server: str, remote: Any, call: CallFn, trust_read_only: bool, timeout_s: float
) -> McpTool:
    """``remote`` is an ``mcp.types.Tool``; ``call(tool, arguments, ctx)`` runs it on the server."""
    schema = dict(remote.input_schema or {"type": "object"})
    schema.setdefault("type", "object")
    annotations = remote.annotations
    read_only = bool(annotations is not None and annotations.read_only_hint)
    approval: PolicyDecision = "allow" if read_only and trust_read_only else "ask"
    title = (annotations.title if annotations is not None else None) or getattr(remote, "title", None)
    description = remote.description or title or f"{remote.name} (MCP server {server})"
    remote_name = remote.name

    async def execute(args: Any, ctx: ToolContext) -> ToolOutput:
        return await call(remote_name, dict(args.root), ctx)

    return McpTool(
        name=name,
        description=f"{description}\n\n(MCP tool {remote_name!r} of server {server!r})",
        args_model=arguments_model(name, schema),
        execute=execute,
        concurrency_safe=read_only,
        approval=approval,
        effect="read" if approval == "allow" else "execute",  # a trusted readOnlyHint is a read in every mode
        timeout_s=timeout_s + 10.0,  # a backstop: the MCP call's own timeout answers MCP_TIMEOUT first
        origin=(server, remote_name),
        input_schema=schema,
        read_only_hint=read_only,
    )


def describe_block(block: Any) -> str:
    """One result content block as text for the model."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        return f"[{kind}: {block.mime_type}, about {size} bytes; not shown to the model]"
    if kind == "resource_link":
        parts = [str(block.uri), block.name, getattr(block, "mime_type", None)]
        return "[resource link: " + ", ".join(p for p in parts if p) + "]"
    if kind == "resource":
        res = block.resource
        mime = getattr(res, "mime_type", None) or "unknown type"
        text = getattr(res, "text", None)
        if text is not None:
            clipped = text if len(text) <= MAX_RESOURCE_TEXT else text[:MAX_RESOURCE_TEXT] + "\n… (clipped)"
            return f"[resource {res.uri} ({mime})]\n{clipped}"
        blob = getattr(res, "blob", "") or ""
        return f"[resource {res.uri}: {mime}, about {len(blob) * 3 // 4} bytes of binary data; not shown]"
    return f"[{kind or 'unknown'} content]"


def _same_json(text: str, value: Any) -> bool:
    """Whether ``text`` already says ``value`` (as JSON, or as the SDK's ``{"result": text}`` wrap)."""
    if isinstance(value, dict) and len(value) == 1 and text in (value.get("result"), json.dumps(value.get("result"))):
        return True
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def result_output(result: Any) -> ToolOutput:
    """A ``CallToolResult`` → the tool result the model sees."""
    texts = [describe_block(b) for b in result.content or ()]
    structured = result.structured_content
    if structured is not None and not any(_same_json(t, structured) for t in texts):
        dumped = json.dumps(structured, ensure_ascii=False, sort_keys=True)  # unless a text mirrors it
        texts.append(dumped if not texts else f"structured result: {dumped}")
    text = "\n".join(t for t in texts if t) or "(no output)"
    kinds = sorted({str(getattr(b, "type", "")) for b in result.content or ()} - {"text"})
    meta: dict[str, JsonValue] | None = {"mcpContent": list(kinds)} if kinds else None
    if result.is_error:
        return ToolOutput(text, is_error=True, code="MCP_TOOL_ERROR", meta=meta)
    return ToolOutput(text, meta=meta)
