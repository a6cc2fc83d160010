"""Small pieces between the SDK and :mod:`.client`: the read-stream relay that notices a server
going away (and keeps junk stdout lines out), paginated ``tools/list`` validated tool by tool
and capped (:data:`MAX_TOOLS_PER_SERVER`), progress callbacks, and readable failure reasons."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...errors import redact

_SDK_PARSE_FAILURE = "Failed to parse JSONRPC message"


class _QuietParseFailures(logging.Filter):
    """The SDK logs a full traceback per non-JSON stdout line; dsh says it once per server."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_SDK_PARSE_FAILURE)


def quiet_sdk_logs() -> None:
    """Install (once) the filter on the SDK's stdio logger."""
    logger = logging.getLogger("mcp.client.stdio")
    if not any(isinstance(f, _QuietParseFailures) for f in logger.filters):
        logger.addFilter(_QuietParseFailures())


def progress_fn(sink: Callable[[str], None] | None) -> Any:
    """The server's ``notifications/progress`` for a call → the tool's live progress frames."""
    if sink is None:
        return None

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
        sink(f"{done} {message}" if message else done)

    return on_progress


def closed(exc: Any) -> bool:
    from mcp.types import CONNECTION_CLOSED

    return getattr(getattr(exc, "error", None), "code", None) == CONNECTION_CLOSED


MAX_TOOLS_PER_SERVER = 100  # a server offering more: the first 100 are used, the rest named in a warning
MAX_PAGES = 100


@dataclass
class Listing:
    """``tools/list`` read tool by tool: the usable tools, and one line per tool left out."""

    tools: list[Any] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    offered: int = 0  # how many the server listed (as far as it was read)
    capped: bool = False


def _schema_problem(schema: Any) -> str | None:
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return f"its inputSchema is a {type(schema).__name__}, not a JSON object"
    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        return f"its inputSchema is not valid JSON Schema ({exc.message[:160]})"
    except Exception as exc:  # a schema so odd the checker itself fails (deep recursion, bad $ref …)
        return f"its inputSchema cannot be checked ({type(exc).__name__})"
    return None


def _tool(raw: Any, listing: Listing) -> Any | None:
    from mcp.types import Tool

    name = raw.get("name") if isinstance(raw, dict) else None
    label = repr(name)[:80] if isinstance(name, str) else "a tool without a name"
    problem = _schema_problem(raw.get("inputSchema", {"type": "object"})) if isinstance(raw, dict) else "not an object"
    if problem is None:
        try:
            return Tool.model_validate(raw)
        except ValueError as exc:
            problem = f"it is not a valid MCP tool ({str(exc).splitlines()[0][:160]})"
    listing.skipped.append(f"{label}: {problem}")
    return None


async def list_tools(session: Any, limit: int = MAX_TOOLS_PER_SERVER) -> Listing:
    """Every page of ``tools/list``, each tool validated on its own: a tool with a broken schema
    is left out (and said), the others kept; at most ``limit`` tools are kept. Linear in the
    listing's size (raw JSON per page, one validation per kept tool)."""
    from mcp.types import ListToolsResult

    listing = Listing()
    cursor = None
    for _ in range(MAX_PAGES):  # pagination, bounded
        page = await _raw_page(session, cursor)
        listing.offered += len(page.tools)
        for raw in page.tools:
            if len(listing.tools) >= limit:
                listing.capped = True
                break
            tool = _tool(raw, listing)
            if tool is not None:
                listing.tools.append(tool)
        cursor = page.nextCursor
        if not cursor or listing.capped:
            break
    absorb = getattr(session, "_absorb_tool_listing", None)  # the SDK's per-tool state (output schemas)
    if absorb is not None:
        with contextlib.suppress(Exception):
            absorb(ListToolsResult(tools=list(listing.tools)), complete=False)
    return listing


async def _raw_page(session: Any, cursor: str | None) -> RawPage:
    """One ``tools/list`` page as JSON: the SDK's ``list_tools`` validates the whole page at once
    (one bad schema fails every tool), so the raw request goes through its dispatcher."""
    send_raw = getattr(getattr(session, "_dispatcher", None), "send_raw_request", None)
    if send_raw is None:  # another SDK layout: its own, strict listing
        from mcp.types import PaginatedRequestParams

        result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        return RawPage(tools=[t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools],
                       nextCursor=result.next_cursor)
    raw = await send_raw("tools/list", {"cursor": cursor} if cursor else None, {})
    return RawPage.model_validate(raw if isinstance(raw, dict) else {})


class RawPage(BaseModel):
    """A ``tools/list`` page before any tool is validated (one bad tool must not sink the page)."""

    model_config = ConfigDict(extra="allow")
    tools: list[Any] = []
    nextCursor: str | None = None  # noqa: N815 (the protocol's name)


@contextlib.asynccontextmanager
async def relay(read: Any, on_junk: Callable[[Exception], None] | None = None
                ) -> AsyncIterator[tuple[Any, asyncio.Event]]:
    """Forward the transport's read stream; ``gone`` is set when it ends (the server went away).
    A line the SDK could not parse (junk on the server's stdout) goes to ``on_junk``, not on."""
    import anyio

    send, receive = anyio.create_memory_object_stream[Any](0)
    gone = asyncio.Event()

    async def pump() -> None:
        try:
            async with send:
                async for item in read:
                    if isinstance(item, Exception):
                        if on_junk is not None:
                            on_junk(item)
                        continue
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            gone.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump)
        try:
            yield receive, gone
        finally:
            tg.cancel_scope.cancel()


def reason(exc: BaseException) -> str:
    """A one-line reason from whatever the SDK raised (unwrapping exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"cannot start: command not found ({exc.filename or exc})"
    text = str(exc) or type(exc).__name__
    return redact(f"{type(exc).__name__}: {text}")[:400]


if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup
