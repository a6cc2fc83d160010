"""Each kernel as the MCP server sees it (issue 41): its own client and the ``dsh.external`` comm.

The server process holds, per kernel a notebook runs on, one :class:`KernelLink`: a kernel client
of its own (``km.client()``: the kernel's authenticated ZMQ channels, the same ones any Jupyter
front end uses), a reader of its IOPub and shell replies, and one comm to the kernel's
``dsh.external`` target (:mod:`.comm`), over which it speaks the host's wire envelopes.

- If the kernel speaks **subshells** (ipykernel ≥ 7), the comm lives on a subshell of its own, so
  the host answers while a cell runs on the main shell (an approval, ``session/info``, a follow);
  else comm messages wait for the running cell, as a widget's do.
- A kernel that has not loaded ``dsh_notebook`` gets ``%load_ext dsh_notebook`` (a silent
  execution: the extension is what lets a person see and decide the external calls); a kernel
  that cannot load it (another language, another environment) is ``KERNEL_UNSUPPORTED``.
- A kernel that is not alive is ``KERNEL_DEAD``; one Jupyter restarted since this link knew it
  (another process id) is ``KERNEL_RESTARTED`` once — its variables are gone, and no call goes on
  as if nothing happened. Nothing here ever starts or restarts a kernel.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from jupyter_core.utils import ensure_async

from ..errors import DshError
from ..wire.codes import received
from .wirelink import WireLink

log = logging.getLogger(__name__)
TARGET = "dsh.external"
_ids = itertools.count(1)
T = TypeVar("T")


def _setter(event: asyncio.Event) -> Callable[[dict[str, Any]], None]:
    """A listener that sets ``event`` when an IOPub message arrives."""

    def on(m: dict[str, Any]) -> None:
        if m["channel"] == "iopub":
            event.set()

    return on


class KernelLink:
    """One kernel: client, readers, the comm, and the executions under way."""

    def __init__(self, kernel_id: str, km: Any) -> None:
        self.kernel_id, self.km = kernel_id, km
        self.client: Any = None
        self.pid: int | None = None  # the kernel process the comm was opened in
        self.comm_id: str | None = None
        self.subshell: str | None = None
        self.wire = WireLink(self._send_comm)
        self._replies: dict[str, asyncio.Future[Any]] = {}
        self._listeners: dict[str, Callable[[dict[str, Any]], None]] = {}  # parent msg_id → iopub/shell sink
        self._hello: asyncio.Future[dict[str, Any]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._spawned: set[asyncio.Future[Any]] = set()
        self._lock = asyncio.Lock()

    # -- state of the kernel -------------------------------------------------------------------
    def kernel_pid(self) -> int | None:
        provisioner = getattr(self.km, "provisioner", None)
        return getattr(provisioner, "pid", None)

    async def check_alive(self) -> None:
        """``KERNEL_DEAD`` / ``KERNEL_RESTARTED`` (once: the link is then reopened)."""
        if not await ensure_async(self.km.is_alive()):
            raise DshError(f"the notebook's kernel {self.kernel_id} is dead: restart it in JupyterLab (its "
                           "variables are gone); nothing was run", code="KERNEL_DEAD")
        if self.pid is not None and self.kernel_pid() not in (None, self.pid):
            self.close()
            raise DshError(f"the notebook's kernel {self.kernel_id} was restarted since the last call: its "
                           "variables are gone (run the notebook's cells again if they are needed); nothing was "
                           "run", code="KERNEL_RESTARTED")

    async def guard(self, aw: Awaitable[T]) -> T:
        """``aw``, unless the kernel dies first (``KERNEL_DEAD`` / ``KERNEL_RESTARTED``): a wait on
        the kernel's host (an approval, a turn) must not outlive the kernel."""
        task = asyncio.ensure_future(aw)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=2.0)
                if done:
                    return task.result()
                await self.check_alive()
        finally:
            if not task.done():
                task.cancel()

    # -- connecting ----------------------------------------------------------------------------
    async def ready(self) -> None:
        """Connected, with the comm open (the extension loaded if it was not)."""
        await self.check_alive()
        async with self._lock:
            if self.comm_id is not None:
                return
            if self.client is None:
                self.client = self.km.client()
                self.client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=True)
                self._tasks = [asyncio.ensure_future(self._read(self.client.get_iopub_msg, "iopub")),
                               asyncio.ensure_future(self._read(self.client.get_shell_msg, "shell")),
                               asyncio.ensure_future(self._read(self.client.get_control_msg, "control"))]
                info = await self._iopub_ready()
                if "kernel subshells" in info.get("supported_features", []):
                    reply = await self.request("create_subshell_request", {}, channel="control")
                    self.subshell = reply["content"].get("subshell_id")
            if not await self._open_comm():
                outcome = await self.execute("%load_ext dsh_notebook", silent=True)
                if outcome.get("status") != "ok" or not await self._open_comm():
                    raise DshError("the notebook's kernel cannot load dsh_notebook (another language or Python "
                                   "environment?): install dsh-notebook in the kernel's environment",
                                   code="KERNEL_UNSUPPORTED")

    async def _iopub_ready(self) -> dict[str, Any]:
        """kernel_info on the control channel until IOPub delivers its status (a new subscriber
        misses what is published before it is connected)."""
        for _ in range(50):
            seen = asyncio.Event()
            msg = self.client.session.msg("kernel_info_request", {})
            self._listeners[msg["header"]["msg_id"]] = _setter(seen)
            reply = await self.request_msg(msg, "control")
            try:
                await asyncio.wait_for(seen.wait(), 0.5)
                return dict(reply["content"])
            except asyncio.TimeoutError:
                continue
            finally:
                self._listeners.pop(msg["header"]["msg_id"], None)
        raise DshError("the kernel's IOPub channel never answered", code="CONNECTION")

    async def _open_comm(self) -> bool:
        """Open the comm; ``False`` when the kernel has no ``dsh.external`` target."""
        comm_id = uuid.uuid4().hex
        self._hello = asyncio.get_running_loop().create_future()
        self.comm_id = comm_id
        self._send_shell("comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": {}}, subshell=True)
        try:
            hello = await asyncio.wait_for(self._hello, 30)
        except (asyncio.TimeoutError, DshError):
            self.comm_id = None
            return False
        self.pid = int(hello.get("pid") or 0) or self.kernel_pid()
        return True

    # -- messages ------------------------------------------------------------------------------
    def _send_shell(self, msg_type: str, content: dict[str, Any], *, subshell: bool = False) -> str:
        msg = self.client.session.msg(msg_type, content)
        if subshell and self.subshell:
            msg["header"]["subshell_id"] = self.subshell
        self.client.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def _send_comm(self, data: dict[str, Any]) -> None:
        if self.comm_id is None:
            raise DshError("the kernel link is closed", code="CONNECTION")
        self._send_shell("comm_msg", {"comm_id": self.comm_id, "data": data}, subshell=True)

    async def request(self, msg_type: str, content: dict[str, Any], *, channel: str = "shell") -> dict[str, Any]:
        return await self.request_msg(self.client.session.msg(msg_type, content), channel)

    async def request_msg(self, msg: dict[str, Any], channel: str) -> dict[str, Any]:
        """Send ``msg`` and wait for its reply on ``channel``."""
        done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        msg_id = msg["header"]["msg_id"]
        previous = self._listeners.get(msg_id)

        def on(m: dict[str, Any]) -> None:
            if previous is not None:
                previous(m)
            if m["channel"] == channel and m["msg_type"].endswith("_reply") and not done.done():
                done.set_result(m)

        self._listeners[msg_id] = on
        getattr(self.client, f"{channel}_channel").send(msg)
        try:
            return await self.guard(done)  # a kernel that dies meanwhile never answers
        finally:
            if self._listeners.get(msg_id) is on:
                self._listeners.pop(msg_id, None)

    async def call(self, kind: str, timeout: float | None = 120, **fields: Any) -> Any:
        """A ``notebook`` / ``inspect`` message of the comm; its value, or its coded error."""
        await self.ready()
        ident = f"r{next(_ids)}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[ident] = fut
        try:
            self._send_comm({"kind": kind, "id": ident, **fields})
            reply = await asyncio.wait_for(fut, timeout)
        finally:
            self._replies.pop(ident, None)
        if not reply.get("ok"):
            error = reply.get("error") or {}
            raise DshError(str(error.get("message", "failed")), code=received(str(error.get("code", "INTERNAL"))))
        return reply.get("value")

    async def _read(self, get: Callable[..., Any], channel: str) -> None:
        while True:
            try:
                msg = await get()
            except asyncio.CancelledError:
                raise
            except Exception:  # a closed socket: the link is over
                log.debug("kernel channel read failed", exc_info=True)
                return
            msg["channel"] = channel
            try:
                self._dispatch(msg)
            except Exception:
                log.exception("dispatching a kernel message failed")

    def _dispatch(self, msg: dict[str, Any]) -> None:
        msg_type, content = msg["msg_type"], msg["content"]
        if msg_type in ("comm_msg", "comm_close") and content.get("comm_id") == self.comm_id and self.comm_id:
            if msg_type == "comm_close":
                self._comm_closed()
                return
            data = content.get("data") or {}
            kind = data.get("kind")
            if kind == "hello" and self._hello is not None and not self._hello.done():
                self._hello.set_result(data)
            elif kind == "reply" and data.get("id") in self._replies:
                fut = self._replies[data["id"]]
                if not fut.done():
                    fut.set_result(data)
            elif kind == "batch":
                self.wire.receive_batch(data.get("items") or [])
            return
        parent = (msg.get("parent_header") or {}).get("msg_id")
        listener = self._listeners.get(parent) if parent else None
        if listener is not None:
            listener(msg)

    def _comm_closed(self) -> None:
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(DshError("no dsh.external target in the kernel", code="KERNEL_UNSUPPORTED"))
            self._hello.exception()
        self.comm_id = None
        self.wire.fail_all(DshError("the kernel closed the dsh.external comm", code="CONNECTION"))

    # -- executing -----------------------------------------------------------------------------
    async def execute(self, code: str, *, silent: bool = False,
                      on_output: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """An ``execute_request`` on the main shell (as a cell runs); the reply's content. IOPub
        outputs go to ``on_output`` as they come; returns once the reply and the idle status
        arrived. ``KERNEL_DEAD`` when the kernel dies meanwhile."""
        msg = self.client.session.msg("execute_request", {
            "code": code, "silent": silent, "store_history": not silent, "user_expressions": {},
            "allow_stdin": False, "stop_on_error": False})
        msg_id = msg["header"]["msg_id"]
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        idle = asyncio.Event()

        def on(m: dict[str, Any]) -> None:
            if m["channel"] == "shell" and m["msg_type"] == "execute_reply" and not reply.done():
                reply.set_result(m["content"])
            elif m["channel"] == "iopub":
                if m["msg_type"] == "status" and m["content"].get("execution_state") == "idle":
                    idle.set()
                elif on_output is not None and m["msg_type"] != "status":
                    on_output(m)

        self._listeners[msg_id] = on
        self.client.shell_channel.send(msg)
        idle_wait: asyncio.Future[Any] = asyncio.ensure_future(idle.wait())
        try:
            while not (reply.done() and idle.is_set()):
                await asyncio.wait({reply, idle_wait}, timeout=2.0)
                if not (reply.done() and idle.is_set()):
                    await self.check_alive()
            return reply.result()
        except asyncio.CancelledError:
            if not reply.done():  # the caller gave up on a run under way: stop it, as Interrupt does
                self._spawn(ensure_async(self.km.interrupt_kernel()))  # now: a cancelled task cannot wait
            raise
        finally:
            idle_wait.cancel()
            self._listeners.pop(msg_id, None)

    def _spawn(self, aw: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(aw)
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        if self.client is not None:
            if self.comm_id is not None:
                try:
                    self._send_shell("comm_close", {"comm_id": self.comm_id, "data": {}}, subshell=True)
                except Exception:
                    pass
            self.client.stop_channels()
        self.client = None
        self.comm_id = None
        self.pid = None
        self.subshell = None
        self.wire.fail_all(DshError("the kernel link was closed", code="CONNECTION"))

