"""The MCP manager: the host's configured servers, started lazily, their tools in the Scope.

One per Host, on the host loop. It listens to ``agent/prepare-tools`` (run before each step
collects its tool list): the first step of the first session that needs tools starts every
enabled server (concurrently, bounded by a start timeout), and each server's tools are
contributed to the host's :class:`~dsh_notebook.context.HarnessContext` as ``SERVER__TOOL`` —
so every agent's Scope sees them, and the same ToolRuntime pipeline runs them. A server that
failed to start is tried again at a later step, at most once a minute; one that died or hung is
restarted by the next call of one of its tools. ``aclose()`` (host shutdown) stops them all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from ...context import Disposable, HarnessContext
from ...errors import ToolError
from ..base import ToolContext, ToolOutput
from .adapter import make_tool, result_output
from .client import McpServer
from .config import McpConfig, McpListing, ServerListing, load_config
from .names import server_prefixes, tool_names

if TYPE_CHECKING:
    from ...config import Settings

log = logging.getLogger(__name__)
RETRY_AFTER_S = 60.0
MAX_MCP_TOOLS = 200  # over every server: more would flood each request (and providers refuse)


class McpManager:
    """Servers of ``$DSH_HOME/mcp.json``, their live connections and their contributed tools."""

    def __init__(self, settings: Settings, context: HarnessContext) -> None:
        self.home = settings.home
        self.context = context
        self.trust_read_only = settings.mcp_trust_readonly
        self.call_timeout = settings.mcp_timeout
        self.config: McpConfig = load_config(self.home)
        self.servers: dict[str, McpServer] = {}
        self._tools: dict[str, list[Disposable]] = {}
        self._tool_sets: dict[str, tuple[Any, ...]] = {}
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self._retry_at: dict[str, float] = {}  # server → when a failed start may be tried again
        self.retry_after_s = RETRY_AFTER_S
        self._build()
        self._hook = context.on("agent/prepare-tools", self.prepare_tools)

    # -- configuration ---------------------------------------------------------------------------
    def _build(self) -> None:
        self.prefixes = server_prefixes(self.config.servers)
        for name, spec in self.config.servers.items():
            current = self.servers.get(name)
            if current is None or current.spec != spec:
                self.servers[name] = server = McpServer(spec)
                server.on_tools_changed = self._contribute  # tools/list_changed: new set, same names

    async def reload(self) -> None:
        """Re-read mcp.json: removed or changed servers stop (their tools go); new ones start lazily."""
        self.config = await asyncio.to_thread(load_config, self.home)  # file I/O off the host loop
        for name in list(self.servers):
            if self.config.servers.get(name) != self.servers[name].spec:
                await self._drop(name)
        self._build()
        if self._started:
            await self.start_all(only_new=True)

    async def _drop(self, name: str) -> None:
        server = self.servers.pop(name)
        self._retract(name)
        await server.stop()

    # -- starting --------------------------------------------------------------------------------
    async def prepare_tools(self, agent: Any) -> None:
        """The ``agent/prepare-tools`` listener: lazy start; a failed start is retried at a later
        step, at most once per :data:`RETRY_AFTER_S` (a server that hangs at start costs little)."""
        try:
            if not self._started:
                await self.start_all()
                return
            now = time.monotonic()
            retry = [s for s in self.servers.values() if s.status == "failed" and not s.tools
                     and not s.spec.disabled and self._retry_at.get(s.name, 0.0) <= now]
            if retry:
                await asyncio.gather(*(self.start(s.name) for s in retry))
        except Exception:  # never fail a step because of a server
            log.exception("starting MCP servers failed")

    async def start_all(self, *, only_new: bool = False) -> None:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            todo = [s.name for s in self.servers.values() if not s.spec.disabled
                    and (not only_new or s.status == "not started")]
            await asyncio.gather(*(self.start(name) for name in todo))
            self._started = True

    async def start(self, name: str) -> McpServer:
        """Start one server (if not running) and (re)contribute its tools. Never raises ToolError."""
        server = self.servers[name]
        if server.spec.disabled:  # "disabled": true in mcp.json: listed, never started
            return server
        try:
            await server.ensure_running()
        except ToolError as exc:
            if server.status != "failed":
                server._fail(exc.message)
            self._retry_at[name] = time.monotonic() + self.retry_after_s
        self._contribute(server)
        return server

    async def restart(self, name: str) -> McpServer:
        server = self.servers[name]
        await server.stop()
        server.status, server.reason = "not started", None
        return await self.start(name)

    # -- tools -----------------------------------------------------------------------------------
    def _contribute(self, server: McpServer) -> None:
        """Register the server's tools in the host context (replacing a previous set if changed)."""
        current = tuple((t.name, t.description, repr(t.input_schema), repr(t.annotations)) for t in server.tools)
        if self._tool_sets.get(server.name) == current:
            return
        self._retract(server.name)
        names = tool_names(server.name, self.prefixes[server.name], [t.name for t in server.tools])
        trust = self.trust_read_only or server.spec.trust_read_only
        timeout = server.spec.timeout or self.call_timeout

        async def call(tool: str, arguments: dict[str, JsonValue], ctx: ToolContext) -> ToolOutput:
            return await self.call(server.name, tool, arguments, ctx)

        others = sum(len(d) for name, d in self._tools.items() if name != server.name)
        offered = server.tools[: max(0, MAX_MCP_TOOLS - others)]
        if len(offered) < len(server.tools):
            server._warn(f"only {len(offered)} of its {len(server.tools)} tools are offered to the model: "
                         f"at most {MAX_MCP_TOOLS} MCP tools in all")
        disposers = []
        for remote in offered:
            tool = make_tool(name=names[remote.name], server=server.name, remote=remote, call=call,
                             trust_read_only=trust, timeout_s=timeout)
            disposers.append(self.context.tool(tool))
        self._tools[server.name] = disposers
        self._tool_sets[server.name] = current

    def _retract(self, name: str) -> None:
        for dispose in self._tools.pop(name, []):
            dispose()
        self._tool_sets.pop(name, None)

    async def call(self, server_name: str, tool: str, arguments: dict[str, JsonValue], ctx: ToolContext) -> ToolOutput:
        server = self.servers.get(server_name)
        if server is None:
            raise ToolError(f"MCP server {server_name!r} is no longer configured", code="MCP_UNKNOWN_SERVER")
        timeout = server.spec.timeout or self.call_timeout
        restarted = server.status != "running"
        result = await server.call(tool, arguments, timeout, progress=ctx.progress)
        if restarted:
            ctx.progress(f"restarted MCP server {server_name}")
            self._contribute(server)
        return result_output(result)

    # -- reading and closing ---------------------------------------------------------------------
    def describe(self) -> McpListing:
        """Servers with status and tools (model-facing names), bad entries, the file's problem."""
        servers: list[ServerListing] = []
        for name in sorted(self.servers):
            server = self.servers[name]
            state = server.describe()
            names = tool_names(name, self.prefixes[name], state["tools"])
            trust = self.trust_read_only or server.spec.trust_read_only
            read_only = {t.name for t in server.tools if t.annotations is not None and t.annotations.read_only_hint}
            entry: ServerListing = {**state, "trustReadOnly": trust, "tools": [
                {"name": names[t], "tool": t, "approval": "allow" if trust and t in read_only else "ask"}
                for t in state["tools"]]}
            if self.servers[name].spec.disabled:
                entry["status"] = "disabled"
            servers.append(entry)
        for name, problem in sorted(self.config.problems.items()):
            servers.append({"name": name, "transport": "?", "target": "", "status": f"failed: {problem}",
                            "tools": [], "starts": 0, "code": "MCP_CONFIG"})
        return {"config": str(self.config.path), "error": self.config.file_error, "servers": servers,
                "trustReadOnly": self.trust_read_only}

    async def aclose(self) -> None:
        """Stop every server (no process is left behind) and remove their tools."""
        self._hook()
        await asyncio.gather(*(s.stop() for s in self.servers.values()), return_exceptions=True)
        for name in list(self._tools):
            self._retract(name)
