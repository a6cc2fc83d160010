"""The host's wire envelopes from the Jupyter Server process, over a kernel's comm (issue 41).

What :class:`~dsh_notebook.client.connection.Connection` is to an in-process client, this is to
the MCP server: ``client-request`` envelopes with their ``rpcId`` (answered by a
``server-response``), stream ``open`` / ``cancel`` (answered by ``item`` / ``error`` / ``end``),
sent as ``{"kind": "envelope", "cid", "envelope"}`` comm messages; the kernel batches the host's
replies (``{"kind": "batch", "items"}``: JSON texts, or their envelopes). Runs on the server's
event loop only.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import DshError
from ..wire.base import tag
from ..wire.codes import received

_ids = itertools.count(1)
CID = "mcp"


class WireLink:
    """Requests and streams to one kernel's host."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send
        self._rpcs: dict[str, asyncio.Future[Any]] = {}
        self._streams: dict[str, asyncio.Queue[dict[str, Any]]] = {}

    def rpc(self, method: str, args: dict[str, Any], timeout: float | None = None) -> Awaitable[dict[str, Any]]:
        """One unary call, sent now: awaiting it gives its ``value``, or raises its coded error as
        :class:`DshError`. (Sent before anything is awaited, so a caller cancelled while it waits
        has still made the request: the host's side of it never depends on the waiting.)"""
        rpc_id = f"x{next(_ids)}"
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._rpcs[rpc_id] = fut
        try:
            self._send(self._request(rpc_id, method, args))
        except BaseException:
            self._rpcs.pop(rpc_id, None)
            raise
        return self._answer(rpc_id, fut, timeout)

    async def _answer(self, rpc_id: str, fut: asyncio.Future[Any], timeout: float | None) -> dict[str, Any]:
        try:
            result = await asyncio.wait_for(fut, timeout)
        finally:
            self._rpcs.pop(rpc_id, None)
        if not result.get("ok"):
            error = result.get("error") or {}
            raise DshError(str(error.get("message", "failed")), code=received(str(error.get("code", "HOST_ERROR"))))
        value = result.get("value")
        return value if isinstance(value, dict) else {}

    def post(self, method: str, args: dict[str, Any]) -> None:
        """A request nobody waits for the answer of, sent now — what a cancelled call can still
        say (its answer, when it comes, is dropped). Nothing is raised when the link is closed."""
        try:
            self._send(self._request(f"x{next(_ids)}", method, args))
        except DshError:
            pass

    @staticmethod
    def _request(rpc_id: str, method: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "envelope", "cid": CID, "envelope": {
            "type": "client-request", "rpcId": rpc_id, "method": method, "payload": {"args": args}}}

    def open(self, endpoint: str, args: dict[str, Any]) -> tuple[str, asyncio.Queue[dict[str, Any]]]:
        """Open a stream: its id and the queue of its frames (``item`` / ``error`` / ``end``)."""
        stream_id = f"s{next(_ids)}"
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._streams[stream_id] = queue
        self._send({"kind": "envelope", "cid": CID, "envelope": {
            "type": "open", "streamId": stream_id, "endpoint": endpoint, "payload": {"args": args}}})
        return stream_id, queue

    def cancel(self, stream_id: str) -> None:
        if self._streams.pop(stream_id, None) is not None:
            try:
                self._send({"kind": "envelope", "cid": CID, "envelope": {"type": "cancel", "streamId": stream_id}})
            except DshError:
                pass

    def receive_batch(self, items: list[Any]) -> None:
        for item in items:
            message = json.loads(item) if isinstance(item, str) else item
            if not isinstance(message, dict):
                continue
            kind = tag(message)
            if kind == "server-response":
                fut = self._rpcs.get(str(message.get("rpcId")))
                if fut is not None and not fut.done():
                    fut.set_result(message.get("result") or {})
            elif kind in ("item", "error", "end"):
                queue = self._streams.get(str(message.get("streamId")))
                if queue is not None:
                    queue.put_nowait(message)
                    if kind != "item":
                        self._streams.pop(str(message.get("streamId")), None)

    def fail_all(self, error: DshError) -> None:
        """The comm is gone: every call under way fails with ``error``, every stream errs."""
        for fut in self._rpcs.values():
            if not fut.done():
                fut.set_result({"ok": False, "error": {"code": error.code, "message": error.message}})
        for stream_id, queue in self._streams.items():
            queue.put_nowait({"type": "error", "streamId": stream_id, "error": {"code": error.code,
                                                                                "message": error.message}})
        self._streams.clear()
