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
from pydantic import JsonValue

from ..errors import DshError
from ..wire.base import dump
from ..wire.codes import received
from ..wire.comm import CommBatch, CommBye, CommEnvelope
from ..wire.external_kernel import (
    InspectAsk,
    KernelHello,
    KernelReply,
    NotebookAsk,
    NotebookSession,
    read_from_kernel,
)
from .kernel_messages import (
    Channel,
    CommMessage,
    ExecuteReply,
    ExecuteRequest,
    KernelInfoReply,
    Output,
    Received,
    Reply,
    Request,
    RequestContent,
    is_output,
    is_read,
)
from .wirelink import WireLink, build

log = logging.getLogger(__name__)
TARGET = "dsh.external"
_ids = itertools.count(1)
T = TypeVar("T")
Listener = Callable[[Channel, Received], None]
"""What gets the messages that answer one request (by the request's ``msg_id``)."""


def _setter(event: asyncio.Event) -> Listener:
    """A listener that sets ``event`` when an IOPub message arrives."""

    def on(channel: Channel, m: Received) -> None:
        if channel == "iopub":
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
        self._replies: dict[str, asyncio.Future[KernelReply]] = {}
        self._listeners: dict[str, Listener] = {}  # parent msg_id → iopub/shell sink
        self._hello: asyncio.Future[KernelHello] | None = None
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
                    if reply["msg_type"] == "create_subshell_reply":
                        self.subshell = reply["content"].get("subshell_id")
            if not await self._open_comm():
                outcome = await self.execute("%load_ext dsh_notebook", silent=True)
                if outcome["status"] != "ok" or not await self._open_comm():
                    raise DshError("the notebook's kernel cannot load dsh_notebook (another language or Python "
                                   "environment?): install dsh-notebook in the kernel's environment",
                                   code="KERNEL_UNSUPPORTED")

    async def _iopub_ready(self) -> KernelInfoReply:
        """kernel_info on the control channel until IOPub delivers its status (a new subscriber
        misses what is published before it is connected)."""
        for _ in range(50):
            seen = asyncio.Event()
            msg = self._message("kernel_info_request", {})
            self._listeners[msg["header"]["msg_id"]] = _setter(seen)
            reply = await self.request_msg(msg, "control")
            try:
                await asyncio.wait_for(seen.wait(), 0.5)
                return reply["content"] if reply["msg_type"] == "kernel_info_reply" else {}
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
        self.pid = hello.pid or self.kernel_pid()
        return True

    # -- messages ------------------------------------------------------------------------------
    def _message(self, msg_type: str, content: RequestContent) -> Request:
        """A request as jupyter_client's session makes it (header, ids, signature later)."""
        msg: Request = self.client.session.msg(msg_type, content)
        return msg

    def _send_shell(self, msg_type: str, content: RequestContent, *, subshell: bool = False) -> str:
        msg = self._message(msg_type, content)
        if subshell and self.subshell:
            msg["header"]["subshell_id"] = self.subshell
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def _send_comm(self, message: CommEnvelope | CommBye | NotebookAsk | InspectAsk) -> None:
        if self.comm_id is None:
            raise DshError("the kernel link is closed", code="CONNECTION")
        self._send_shell("comm_msg", {"comm_id": self.comm_id, "data": dump(message)}, subshell=True)

    async def request(self, msg_type: str, content: RequestContent, *, channel: Channel = "shell") -> Reply:
        return await self.request_msg(self._message(msg_type, content), channel)

    async def request_msg(self, msg: Request, channel: Channel) -> Reply:
        """Send ``msg`` and wait for its reply on ``channel``."""
        done: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        msg_id = msg["header"]["msg_id"]
        previous = self._listeners.get(msg_id)

        def on(on_channel: Channel, m: Received) -> None:
            if previous is not None:
                previous(on_channel, m)
            if on_channel == channel and not done.done() and (
                    m["msg_type"] == "execute_reply" or m["msg_type"] == "kernel_info_reply"
                    or m["msg_type"] == "create_subshell_reply"):
                done.set_result(m)

        self._listeners[msg_id] = on
        getattr(self.client, f"{channel}_channel").send(msg)
        try:
            return await self.guard(done)  # a kernel that dies meanwhile never answers
        finally:
            if self._listeners.get(msg_id) is on:
                self._listeners.pop(msg_id, None)

    async def notebook_session(self) -> NotebookSession:
        """The notebook's session (made as ``%dsh`` makes one when there is none yet)."""
        return NotebookSession.model_validate(await self._ask(NotebookAsk(id=f"r{next(_ids)}")))

    async def inspect(self, name: str) -> dict[str, JsonValue]:
        """The in-kernel agent's safe description of the variable ``name`` (masked)."""
        return await self._ask(build(InspectAsk, id=f"r{next(_ids)}", name=name))

    async def _ask(self, ask: NotebookAsk | InspectAsk, timeout: float | None = 120) -> dict[str, JsonValue]:
        """An ask of the comm; its value, or its coded error."""
        await self.ready()
        fut: asyncio.Future[KernelReply] = asyncio.get_running_loop().create_future()
        self._replies[ask.id] = fut
        try:
            self._send_comm(ask)
            reply = await asyncio.wait_for(fut, timeout)
        finally:
            self._replies.pop(ask.id, None)
        if not reply.ok:
            error = reply.error
            raise DshError(error.message if error else "failed", code=received(error.code if error else "INTERNAL"))
        return reply.value or {}

    async def _read(self, get: Callable[[], Awaitable[object]], channel: Channel) -> None:
        while True:
            try:
                msg = await get()
            except asyncio.CancelledError:
                raise
            except Exception:  # a closed socket: the link is over
                log.debug("kernel channel read failed", exc_info=True)
                return
            if not is_read(msg):  # a message no reader here reads (execute_input, clear_output …)
                continue
            try:
                self._dispatch(channel, msg)
            except Exception:
                log.exception("dispatching a kernel message failed")

    def _dispatch(self, channel: Channel, msg: Received) -> None:
        if msg["msg_type"] == "comm_msg" or msg["msg_type"] == "comm_close":
            if self.comm_id and msg["content"]["comm_id"] == self.comm_id:
                self._from_comm(msg)
                return
        parent = msg["parent_header"].get("msg_id")
        listener = self._listeners.get(parent) if parent else None
        if listener is not None:
            listener(channel, msg)

    def _from_comm(self, msg: CommMessage) -> None:
        if msg["msg_type"] == "comm_close":
            self._comm_closed()
            return
        message = read_from_kernel(msg["content"]["data"])
        if isinstance(message, KernelHello):
            if self._hello is not None and not self._hello.done():
                self._hello.set_result(message)
        elif isinstance(message, KernelReply):
            fut = self._replies.get(message.id)
            if fut is not None and not fut.done():
                fut.set_result(message)
        elif isinstance(message, CommBatch):
            self.wire.receive_batch(message.items)

    def _comm_closed(self) -> None:
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(DshError("no dsh.external target in the kernel", code="KERNEL_UNSUPPORTED"))
            self._hello.exception()
        self.comm_id = None
        self.wire.fail_all(DshError("the kernel closed the dsh.external comm", code="CONNECTION"))

    # -- executing -----------------------------------------------------------------------------
    async def execute(self, code: str, *, silent: bool = False,
                      on_output: Callable[[Output], None] | None = None) -> ExecuteReply:
        """An ``execute_request`` on the main shell (as a cell runs); the reply's content. IOPub
        outputs go to ``on_output`` as they come; returns once the reply and the idle status
        arrived. ``KERNEL_DEAD`` when the kernel dies meanwhile."""
        request: ExecuteRequest = {"code": code, "silent": silent, "store_history": not silent, "user_expressions": {},
                                   "allow_stdin": False, "stop_on_error": False}
        msg = self._message("execute_request", request)
        msg_id = msg["header"]["msg_id"]
        reply: asyncio.Future[ExecuteReply] = asyncio.get_running_loop().create_future()
        idle = asyncio.Event()

        def on(channel: Channel, m: Received) -> None:
            if channel == "shell" and m["msg_type"] == "execute_reply":
                if not reply.done():
                    reply.set_result(m["content"])
            elif channel == "iopub":
                if m["msg_type"] == "status":
                    if m["content"]["execution_state"] == "idle":
                        idle.set()
                elif on_output is not None and is_output(m):
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

