"""The Host (DESIGN §2): one per process, on its own thread with its own asyncio loop.

Everything that runs an agent — the Agent registry, the Session Controller, the Gateway, every
Agent, Session and tool — lives on the host loop and is touched only there. Clients reach it
only through a :class:`ConnectionHandler` (``host.connect(send)``), whatever thread they are on:
the kernel's main thread, a comm handler's thread, a CLI, a ``serve --stdio`` reader. Helpers
for running host-side coroutines from elsewhere: :meth:`Host.run` (blocking, any non-host
thread), :meth:`Host.arun` (awaitable from any other event loop), :meth:`Host.submit`
(a ``concurrent.futures.Future``). None of them ever blocks the host loop.

A Host runs the observers and the checkpoints it is given (:class:`~.parts.HostParts`), none if
it is given none: :mod:`dsh_notebook.launcher` builds the real ones (the kernel's host,
``serve --stdio``, ``run``). ``Host.get()`` starts the process-wide host lazily (the launcher's
``process_host()`` with the real parts) and registers an ``atexit`` shutdown;
``shutdown()`` cancels running turns (they end ``aborted`` with every call answered), flushes
and closes the logs, ends every stream, then stops the loop and joins the thread.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar, TypedDict, TypeVar

from pydantic import JsonValue

from ..config import Settings, settings_from_env
from ..context import HarnessContext
from ..errors import DshError, HostError
from .connection import ConnectionHandler
from .contract import DESCRIPTORS
from .control import ControlHub
from .controller import SessionController
from .external import ExternalCalls
from .gateway import Gateway, Tracer
from .parts import NO_PARTS, HostParts
from .registry import AdapterFactory, AgentRegistry
from .saved import ReadOnlyController, SavedLog

log = logging.getLogger(__name__)
T = TypeVar("T")


class ConnectionView(TypedDict):
    caller: str
    streams: list[str]


class HostView(TypedDict):
    """``Host.describe()``: what a notebook prints of the host."""

    thread: str
    closed: bool
    services: list[str]
    routes: list[dict[str, str]]
    agents: list[dict[str, JsonValue]]
    connections: list[ConnectionView]


class Host:
    """The in-process host: loop thread, registry, controller, gateway, trace."""

    _instance: ClassVar[Host | None] = None
    _instance_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        adapter_factory: AdapterFactory | None = None,
        parts: HostParts = NO_PARTS,
        name: str = "dsh-host",
    ) -> None:
        self.settings = settings or settings_from_env()
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.closed = False
        self.context = HarnessContext("host")
        self.tracer = Tracer()
        self.control = ControlHub()
        self.registry = AgentRegistry(
            self.settings, control=self.control, context=self.context, adapter_factory=adapter_factory, parts=parts
        )
        self.controller = SessionController(self.registry, self.control)
        self.externals = ExternalCalls(self.registry)  # external agents' calls (issue 41)
        self.gateway = Gateway(DESCRIPTORS, {"sessionController": self.controller, "externalCalls": self.externals})
        self.context.provide("sessionController", self.controller)
        self.context.provide("agents", self.registry)
        self.context.provide("sessions", self.registry.store)
        self.context.provide("gateway", self.gateway)
        from ..tools.mcp.manager import McpManager  # no import of the mcp SDK until a server starts

        self.mcp = McpManager(self.settings, self.context)
        self.context.provide("mcp", self.mcp)
        self.connections: list[ConnectionHandler] = []
        self._thread.start()
        self._ready.wait()

    # -- the process-wide host ----------------------------------------------------------------
    @classmethod
    def get(cls, settings: Settings | None = None, parts: HostParts = NO_PARTS) -> Host:
        """The process's host, started on first use (``settings`` and ``parts`` only matter then:
        :func:`dsh_notebook.launcher.process_host` starts it with the real observers and checkpoints)."""
        with cls._instance_lock:
            if cls._instance is None or cls._instance.closed:
                cls._instance = cls(settings, parts=parts)
                atexit.register(cls._instance.shutdown)
            return cls._instance

    def given(self, parts: HostParts) -> None:
        """Hand ``parts`` to a host started without any (a bare ``Host.get()`` before the first
        ``%dsh``): the sessions it makes from now on get them. A host that has parts keeps its own."""
        if self.registry.parts is NO_PARTS:
            self.registry.parts = parts

    @classmethod
    def current(cls) -> Host | None:
        """The process's host if one is running (never starts one)."""
        inst = cls._instance
        return inst if inst is not None and not inst.closed else None

    # -- the loop thread ----------------------------------------------------------------------
    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    @property
    def on_host_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the host loop from any thread."""
        if self.closed or self.loop.is_closed():
            coro.close()
            raise HostError("the host is shut down", code="HOST_CLOSED")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the host loop and wait for it (never from the host thread)."""
        if self.on_host_thread:
            coro.close()
            raise HostError("Host.run() on the host thread would deadlock; await instead", code="DEADLOCK")
        return self.submit(coro).result(timeout)

    def call(self, fn: Callable[[], T], timeout: float | None = 30.0) -> T:
        """Run the plain function ``fn`` on the host loop and return its result: how another
        thread changes host-side state (``host.context`` contributions) without racing the loop.
        On the host thread it runs at once."""
        if self.on_host_thread:
            return fn()

        async def on_loop() -> T:
            return fn()

        return self.run(on_loop(), timeout)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` on the host loop from asyncio code on any loop."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on the host loop soon (thread-safe, fire and forget)."""
        self.loop.call_soon_threadsafe(fn, *args)

    # -- connections --------------------------------------------------------------------------
    def connect(self, send: Callable[[str], None], *, caller: str = "in-process") -> ConnectionHandler:
        """A new connection; ``send(text)`` receives every host message (must not block)."""
        if self.closed:
            raise HostError("the host is shut down", code="HOST_CLOSED")
        handler = ConnectionHandler(self.loop, self.gateway, send, caller=caller, tracer=self.tracer)
        self.connections.append(handler)
        return handler

    def connect_saved(
        self, send: Callable[[str], None], log: SavedLog | DshError, *, caller: str = "replay"
    ) -> ConnectionHandler:
        """A connection that serves one saved log read-only (``session/info``/``session/follow``
        through the same Descriptors; everything else ``READ_ONLY``), e.g. a widget's replay."""
        if self.closed:
            raise HostError("the host is shut down", code="HOST_CLOSED")
        service = ReadOnlyController.of_log(log, default_model=self.settings.model)
        gateway = Gateway(DESCRIPTORS, {"sessionController": service})
        handler = ConnectionHandler(self.loop, gateway, send, caller=caller, tracer=self.tracer)
        self.connections.append(handler)
        return handler

    # -- for learners -------------------------------------------------------------------------
    def describe(self) -> HostView:
        """Services, routes, live agents, open streams — what a notebook prints."""
        return {
            "thread": self._thread.name,
            "closed": self.closed,
            "services": sorted(self.context.services()),
            "routes": self.gateway.routes(),
            "agents": self.registry.describe(),
            "connections": [{"caller": c.caller, "streams": c.open_streams} for c in self.connections],
        }

    # -- shutdown -----------------------------------------------------------------------------
    def shutdown(self, timeout: float = 30.0) -> None:
        """Cancel runs (turns end aborted), flush logs, end streams, stop the loop. Idempotent."""
        if self.closed:
            return
        if self.on_host_thread:
            raise HostError("shutdown() from the host thread; call it from another thread", code="DEADLOCK")
        try:
            self.run(self.registry.aclose(), timeout)
        except Exception:
            log.exception("host shutdown did not finish cleanly")
        try:
            self.run(self.mcp.aclose(), timeout)  # MCP servers end with the host: no orphans
        except Exception:
            log.exception("stopping MCP servers did not finish cleanly")
        self.closed = True
        for handler in self.connections:
            handler.closed = True
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        with Host._instance_lock:
            if Host._instance is self:
                Host._instance = None

    def __repr__(self) -> str:
        return f"<Host {self._thread.name} {'closed' if self.closed else 'running'} {len(self.registry.live)} live>"
