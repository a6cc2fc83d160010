"""One MCP server connection on the Host's loop: start, list tools, call, notice death, stop.

The SDK's transports and ``ClientSession`` are anyio context managers, which must be entered
and left in one task: each connection therefore lives in its own *runner* task on the host loop,
which opens the transport and session, lists the tools, reports ready and then waits for a stop
request or for the transport to end. Calls come from the agents' tool tasks and go through the
shared ``ClientSession``. Between transport and session sits a small relay, so the end of the
server's output (the process died) is noticed at once, not at the next call.

Status: ``not started`` → ``starting`` → ``running``; ``failed`` (with a reason) when it could
not start, died, or hung past its timeout (then it is stopped). The next use restarts it.
Errors are :class:`~dsh_notebook.errors.ToolError` with ``MCP_*`` codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from pydantic import JsonValue

from ...errors import ToolError, redact
from .config import ServerSpec, ServerState
from .transport import Listing, quiet_sdk_logs
from .transport import closed as _closed
from .transport import list_tools as _list_tools
from .transport import progress_fn as _progress_fn
from .transport import reason as _reason
from .transport import relay as _relay

log = logging.getLogger(__name__)
Status = Literal["not started", "starting", "running", "failed"]
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0


def _sdk() -> Any:
    try:
        import mcp
    except ImportError:
        raise ToolError(
            "the 'mcp' package is not installed: pip install 'dsh-notebook[mcp]'", code="MCP_NOT_INSTALLED"
        ) from None
    return mcp


class McpServer:
    """A configured server and, while it runs, its live session (host loop only)."""

    def __init__(self, spec: ServerSpec, *, start_timeout: float = START_TIMEOUT_S) -> None:
        self.spec = spec
        self.start_timeout = spec.start_timeout or start_timeout
        self.status: Status = "not started"
        self.reason: str | None = None
        self.tools: list[Any] = []  # mcp.types.Tool
        self.pid: int | None = None
        self.starts = 0
        self._session: Any = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._stderr: Any = None
        self._background: set[asyncio.Task[None]] = set()
        self.on_tools_changed: Callable[[McpServer], None] | None = None
        self.warnings: list[str] = []  # tools left out, junk on stdout: one line each, per start
        self._junk_said = False

    @property
    def name(self) -> str:
        return self.spec.name

    # -- lifecycle -------------------------------------------------------------------------------
    async def ensure_running(self) -> None:
        """Start (or restart) the server unless it runs. Raises ``MCP_START_FAILED`` & co."""
        if self.status == "running" and self._session is not None:
            return
        async with self._lock:
            if self.status == "running" and self._session is not None:
                return
            await self._stop_runner()
            await self._start()

    async def _start(self) -> None:
        _sdk()
        self.status, self.reason, self.starts = "starting", None, self.starts + 1
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._runner = asyncio.create_task(self._run(ready, self._stop), name=f"dsh-mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout)
        except asyncio.TimeoutError:
            await self._stop_runner()
            self._fail(f"did not answer initialize / tools/list within {self.start_timeout:g} s")
            raise ToolError(f"MCP server {self.name!r} {self.reason}", code="MCP_TIMEOUT") from None
        except asyncio.CancelledError:
            await self._stop_runner()
            self._fail("start was cancelled")
            raise
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(f"MCP server {self.name!r} failed to start: {self.reason or exc}", code="MCP_START_FAILED") from None

    def _warn(self, line: str) -> None:
        self.warnings.append(line)
        log.warning("dsh: MCP server %r: %s", self.name, line)

    def _on_junk(self, exc: Exception) -> None:
        """A stdout line that is not JSON-RPC: ignored, said once per start (no SDK traceback)."""
        if self._junk_said:
            return
        self._junk_said = True
        shown = str(exc).split("input_value=", 1)[-1].split(", input_type", 1)[0][:80]
        self._warn(f"printed a line on stdout that is not JSON-RPC (ignored; a server must log to "
                   f"stderr): {redact(shown)}")

    def _take(self, listing: Listing) -> list[Any]:
        for line in listing.skipped[:20]:
            self._warn(f"tool {line}; it is left out, the server's other tools are kept")
        if len(listing.skipped) > 20:
            self._warn(f"{len(listing.skipped) - 20} more tools with broken schemas left out")
        if listing.capped:
            self._warn(f"offers more than {len(listing.tools)} tools ({listing.offered}+ listed); only the "
                       f"first {len(listing.tools)} are used — give the model fewer tools, or split the server")
        return listing.tools

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        mcp = _sdk()
        quiet_sdk_logs()
        self.warnings, self._junk_said = [], False
        try:
            async with self._transport() as (read, write), _relay(read, self._on_junk) as (relayed, gone):
                async with mcp.ClientSession(relayed, write, message_handler=self._on_message) as session:
                    await session.initialize()
                    self.tools = self._take(await _list_tools(session))
                    self._session, self.status = session, "running"
                    ready.set_result(None)
                    waits = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(gone.wait())]
                    try:
                        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        for w in waits:
                            w.cancel()
                    self._session = None
                    if not stop.is_set():
                        self._fail("the server closed its connection (exited)" + self._stderr_tail())
        except asyncio.CancelledError:
            self._session = None
            raise
        except BaseException as exc:  # an ExceptionGroup from anyio, OSError from spawning …
            self._session = None
            if not stop.is_set() or not ready.done():
                self._fail(_reason(exc) + self._stderr_tail())
            if not ready.done():
                ready.set_exception(RuntimeError(self.reason))
                ready.exception()
        finally:
            self._session = None
            if self.status in ("running", "starting") and stop.is_set():
                self.status = "not started"

    async def _on_message(self, message: Any) -> None:
        """Server notifications: ``tools/list_changed`` re-lists the tools (in the background)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed" and self._session is not None:
            task = asyncio.get_running_loop().create_task(self._relist(self._session))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _relist(self, session: Any) -> None:
        try:
            self.tools = self._take(await _list_tools(session))
        except Exception as exc:
            log.info("MCP server %s: re-listing tools failed: %s", self.name, exc)
            return
        if self.on_tools_changed is not None:
            self.on_tools_changed(self)

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        spec = self.spec
        if spec.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(spec.headers) or None)
            async with client, streamable_http_client(spec.url or "", http_client=client) as streams:
                self.pid = None
                yield streams[0], streams[1]
            return
        from mcp.client.stdio import StdioServerParameters, stdio_client

        if self._stderr is None:
            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=spec.command or "", args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
        )
        async with stdio_client(params, errlog=self._stderr) as streams:
            yield streams[0], streams[1]

    def _stderr_tail(self) -> str:
        fh = self._stderr
        if fh is None:
            return ""
        try:
            fh.flush()
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 600))
            lines = [ln.strip() for ln in fh.read().splitlines() if ln.strip()]
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends: {redact(lines[-1])[:300]}" if lines else ""

    def _fail(self, reason: str) -> None:
        self.status, self.reason, self._session = "failed", reason, None
        log.info("MCP server %s: %s", self.name, reason)

    async def _stop_runner(self) -> None:
        runner, stop = self._runner, self._stop
        self._runner = None
        if runner is None:
            return
        if stop is not None:
            stop.set()
        if not runner.done() and self._session is None:
            runner.cancel()  # still starting (or stuck in a call's aftermath): no graceful point to wait for
        if not runner.done():
            done, _ = await asyncio.wait({runner}, timeout=STOP_TIMEOUT_S)
            if not done:
                runner.cancel()
                await asyncio.wait({runner}, timeout=STOP_TIMEOUT_S)
        self._session = None

    async def stop(self) -> None:
        """Stop the server (its process ends); the next use starts it again."""
        async with self._lock:
            await self._stop_runner()
            if self.status != "failed":
                self.status = "not started"
            if self._stderr is not None:
                self._stderr.close()
                self._stderr = None

    # -- calls -----------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, JsonValue], timeout: float,
                   progress: Callable[[str], None] | None = None) -> Any:
        """``tools/call`` → ``CallToolResult``. Dead or hung servers raise coded ToolErrors."""
        try:
            await self.ensure_running()
        except ToolError as exc:
            if exc.code == "MCP_NOT_INSTALLED":
                raise
            raise ToolError(f"MCP server {self.name!r} is not available: {self.reason or exc.message}",
                            code="MCP_SERVER_UNAVAILABLE") from None
        session = self._session
        from mcp.shared.exceptions import MCPError

        try:
            return await asyncio.wait_for(
                session.call_tool(tool, arguments, progress_callback=_progress_fn(progress)), timeout)
        except asyncio.TimeoutError:
            self._fail(f"a call to {tool!r} did not answer within {timeout:g} s; the server was stopped")
            await self._stop_runner()
            raise ToolError(f"MCP server {self.name!r}: {tool} timed out after {timeout:g} s; the server "
                            "was stopped and starts again on its next use", code="MCP_TIMEOUT") from None
        except MCPError as exc:
            if _closed(exc) or self.status != "running":
                await asyncio.sleep(0)  # let the runner record how it ended
                if self.status == "running":
                    self._fail("the connection closed during a call")
                raise ToolError(f"MCP server {self.name!r} died during {tool} ({self.reason}); it starts "
                                "again on its next use", code="MCP_SERVER_DIED") from None
            raise ToolError(f"MCP server {self.name!r} refused {tool}: {exc}", code="MCP_ERROR") from None
        except (ToolError, asyncio.CancelledError):
            raise
        except Exception as exc:  # a transport failure in an unknown state: restart on next use
            self._fail(f"{tool} failed in the transport ({_reason(exc)})")
            await self._stop_runner()
            raise ToolError(f"MCP server {self.name!r}: {self.reason}; it starts again on its next use",
                            code="MCP_SERVER_DIED") from None

    def describe(self) -> ServerState:
        status = f"failed: {self.reason}" if self.status == "failed" else self.status
        return {"name": self.name, "transport": self.spec.transport, "target": self.spec.describe(),
                "status": status, "tools": [t.name for t in self.tools], "starts": self.starts,
                "warnings": list(self.warnings)}
