"""The MCP server object (the official ``mcp`` SDK's low-level :class:`~mcp.server.lowlevel.Server`)
and the dispatch of its tool calls (issue 41).

One :class:`NotebookMcp` per Jupyter Server: the kernel links (one per kernel, made on first use,
closed with the server), the notebooks, and the SDK's :class:`StreamableHTTPSessionManager`, run
as a task of the server's event loop (started on the first request). A call's answer is always a
``CallToolResult``: the content, or ``[CODE] message`` with ``isError`` and
``structuredContent.error {code, message}`` the agent can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, TypeGuard, get_args

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from pydantic import JsonValue

from ..errors import DshError
from ..redaction import redact
from ..wire.events import ExternalClient
from ..wire.external import ExternalTool
from . import clean_path, version
from .ask import ask_agent
from .calls import HEARTBEAT, CallContext, ExternalCallRun, Progress
from .cells import Part
from .kernels import KernelLink
from .notebooks import Notebooks
from .pages import LabPages
from .tools import BODIES, TOOLS
from .wirelink import build

log = logging.getLogger(__name__)
INSTRUCTIONS = ("Tools for the notebooks of this JupyterLab. Every call is recorded in the session of the notebook it "
                "touches and drawn live in the person's notebook; code execution and cell edits follow that session's "
                "permission mode (a person may approve or refuse them there). Cells are addressed by their nbformat id.")


def is_tool(name: str) -> TypeGuard[ExternalTool]:
    return name in get_args(ExternalTool)


def error_result(exc: DshError) -> types.CallToolResult:
    text = f"[{exc.code}] {redact(exc.message)}"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True,
                                structured_content={"error": {"code": exc.code, "message": redact(exc.message)}})


def parts_result(parts: list[Part], error: DshError | None) -> types.CallToolResult:
    content: list[Any] = [types.TextContent(type="text", text=p.text) if p.kind == "text"
                          else types.ImageContent(type="image", data=p.data, mime_type=p.mime) for p in parts]
    if error is None:
        return types.CallToolResult(content=content or [types.TextContent(type="text", text="(done)")])
    failed = error_result(error)
    return types.CallToolResult(content=[*content, *failed.content], is_error=True,
                                structured_content=failed.structured_content)


class NotebookMcp:
    """The MCP server of one Jupyter Server."""

    def __init__(self, serverapp: Any, heartbeat: float = HEARTBEAT) -> None:
        self.app = serverapp
        self.pages = LabPages()
        self.notebooks = Notebooks(serverapp, self.pages)
        self.links: dict[str, KernelLink] = {}
        self.kernels_used: dict[str, str] = {}  # notebook path -> the kernel id its last call used
        self.heartbeat = heartbeat
        self.server: Server[Any] = Server("dsh-notebook", version=version(), instructions=INSTRUCTIONS,
                                          on_list_tools=self._list_tools, on_call_tool=self._call_tool)
        self.manager = StreamableHTTPSessionManager(self.server)
        self._task: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        async with self._lock:
            if self._task is None:
                self._task = asyncio.ensure_future(self._run())
        await self._started.wait()

    async def _run(self) -> None:
        async with self.manager.run():
            self._started.set()
            await self._stop.wait()

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 10)
        for link in list(self.links.values()):
            with contextlib.suppress(Exception):
                link.close()
        self.links.clear()

    def link(self, kernel_id: str) -> KernelLink:
        if kernel_id not in self.app.kernel_manager:  # it died and Jupyter let it go
            old = self.links.pop(kernel_id, None)
            if old is not None:
                old.close()
            raise DshError(f"the notebook's kernel {kernel_id} is dead: restart it in JupyterLab (its variables are "
                           "gone); nothing was run", code="KERNEL_DEAD")
        km = self.app.kernel_manager.get_kernel(kernel_id)
        link = self.links.get(kernel_id)
        if link is None or link.km is not km:
            link = self.links[kernel_id] = KernelLink(kernel_id, km)
        return link

    # -- MCP -----------------------------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=name, description=desc, input_schema=schema)
                                            for name, (desc, schema) in TOOLS.items()])

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args: dict[str, JsonValue] = dict(params.arguments or {})
        name = params.name
        try:
            if not is_tool(name):
                raise DshError(f"no tool {name!r}; the tools: {', '.join(TOOLS)}", code="BAD_TOOL_NAME")
            if name == "list_notebooks":
                return await self.list_notebooks()
            return await self._notebook_call(ctx, name, args)
        except DshError as exc:
            return error_result(exc)
        except Exception as exc:  # every call gets a result
            log.exception("external call %s failed", params.name)
            return error_result(DshError(f"{type(exc).__name__}: {exc}", code="INTERNAL"))

    async def _notebook_call(self, ctx: Any, name: ExternalTool, args: dict[str, JsonValue]) -> types.CallToolResult:
        path, kernel_id = await self._kernel_of(str(args.get("path", "")))
        link = self.link(kernel_id)
        session = ctx.session
        params = session.client_params
        info = params.client_info if params is not None else None
        client = build(ExternalClient, name=info.name if info else "unknown", version=info.version if info else None)
        request = getattr(ctx, "request", None)
        mcp_session = request.headers.get("mcp-session-id") if request is not None else None

        async def report(n: float, message: str) -> None:
            await session.report_progress(n, None, message)

        with Progress(report, self.heartbeat) as progress:
            await progress.say("connecting to the notebook's kernel")
            await link.ready()
            if name in ("insert_cell", "edit_cell"):
                await self.notebooks.settle(path)  # the person's unsaved changes before the checkpoint
            run = ExternalCallRun(link, CallContext(client, mcp_session, progress, self.pages), name, args, path,
                                  self.notebooks.os_path(path))
            body = ask_agent if name == "ask_agent" else BODIES[name]
            parts, error = await run.run(lambda r: body(r, self.notebooks))
        return parts_result(parts, error)

    async def _kernel_of(self, path: str) -> tuple[str, str]:
        """The notebook's kernel; ``KERNEL_DEAD`` — not ``NO_KERNEL`` — for a notebook whose kernel
        this server used and Jupyter has since let go (a kernel that dies with no restarts left is
        removed with its Jupyter session): the agent learns its variables are gone, whenever it asks."""
        try:
            found = await self.notebooks.kernel_of(path)
        except DshError as exc:
            if exc.code != "NO_KERNEL":
                raise
            known = self.kernels_used.get(clean_path(path))  # (kernel_of cleaned it already)
            if known is not None and known not in self.app.kernel_manager:
                raise DshError(f"the notebook's kernel {known} is gone (it died or was shut down): start a kernel for "
                               "it in JupyterLab (its variables are gone); nothing was run", code="KERNEL_DEAD") from None
            raise
        self.kernels_used[found[0]] = found[1]
        return found

    async def list_notebooks(self) -> types.CallToolResult:
        lines, open_paths = [], set()
        for s in await self.notebooks.sessions():
            path = clean_path(str(s.get("path", "x")))
            open_paths.add(path)
            kernel = s.get("kernel") or {}
            km = self.app.kernel_manager
            alive = kernel.get("id") in km and await _alive(km.get_kernel(kernel["id"]))
            state = kernel.get("execution_state", "?") if alive else "dead"
            lines.append(f"{path} · kernel {kernel.get('name')} ({state})")
        for path in await self.notebooks.files():
            if path not in open_paths:
                lines.append(f"{path} · no kernel (open it in JupyterLab to use it here)")
        return types.CallToolResult(content=[types.TextContent(type="text", text="\n".join(lines) or "(no notebooks)")])


async def _alive(km: Any) -> bool:
    from jupyter_core.utils import ensure_async

    try:
        return bool(await ensure_async(km.is_alive()))
    except Exception:
        return False
