"""The host's wire envelopes from the Jupyter Server process, over a kernel's comm (issue 41).

What :class:`~dsh_notebook.client.connection.Connection` is to an in-process client, this is to
the MCP server: ``client-request`` envelopes with their ``rpcId`` (answered by a
``server-response``), stream ``open`` / ``cancel`` (answered by ``item`` / ``error`` / ``end``),
sent as :class:`~dsh_notebook.wire.comm.CommEnvelope` comm messages; the kernel batches the host's
replies (:class:`~dsh_notebook.wire.comm.CommBatch`: JSON texts, or their envelopes). Every
request is an endpoint's args model and its answer that endpoint's result model (checked against
:data:`~dsh_notebook.wire.endpoints.ENDPOINTS`). Runs on the server's event loop only.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, JsonValue, ValidationError

from ..errors import DshError
from ..wire.base import dump
from ..wire.codes import received
from ..wire.comm import CommEnvelope
from ..wire.endpoints import ENDPOINTS
from ..wire.envelopes import (
    ArgsPayload,
    ClientRequest,
    ReadItem,
    ReadMessageAdapter,
    ReadOk,
    ReadResponse,
    ResultError,
    StreamCancel,
    StreamEnded,
    StreamError,
    StreamOpen,
    WireError,
    read_server_message,
)

log = logging.getLogger(__name__)
_ids = itertools.count(1)
CID = "mcp"
M = TypeVar("M", bound=BaseModel)
Frame = ReadItem | StreamError | StreamEnded
"""What a stream's queue holds: its items, then its ``error`` or ``end``."""


def build(model: type[M], **fields: object) -> M:
    """``model(**fields)``; a value it refuses is ``BAD_ARGS`` (what the host would answer)."""
    try:
        return model(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DshError(f"{where}: {first['msg']}", code="BAD_ARGS") from None


def _endpoint(method: str, args: BaseModel, result: type[BaseModel] | None) -> None:
    """The args (and result) models are the endpoint's own (a mistake here is a defect)."""
    entry = ENDPOINTS.get(method)
    if entry is None or not isinstance(args, entry[0]) or (result is not None and entry[1] is not result):
        raise TypeError(f"{method} does not take {type(args).__name__} / answer {getattr(result, '__name__', '?')}")


class WireLink:
    """Requests and streams to one kernel's host."""

    def __init__(self, send: Callable[[CommEnvelope], None]) -> None:
        self._send = send
        self._rpcs: dict[str, asyncio.Future[ReadOk | ResultError]] = {}
        self._streams: dict[str, asyncio.Queue[Frame]] = {}

    def rpc(self, method: str, args: BaseModel, result: type[M], timeout: float | None = None) -> Awaitable[M]:
        """One unary call, sent now: awaiting it gives its value as ``result``, or raises its
        coded error as :class:`DshError`. (Sent before anything is awaited, so a caller cancelled
        while it waits has still made the request: the host's side of it never depends on the waiting.)"""
        _endpoint(method, args, result)
        rpc_id = f"x{next(_ids)}"
        fut: asyncio.Future[ReadOk | ResultError] = asyncio.get_running_loop().create_future()
        self._rpcs[rpc_id] = fut
        try:
            self._send(self._request(rpc_id, method, args))
        except BaseException:
            self._rpcs.pop(rpc_id, None)
            raise
        return self._answer(rpc_id, fut, result, timeout)

    async def _answer(self, rpc_id: str, fut: asyncio.Future[ReadOk | ResultError], result: type[M],
                      timeout: float | None) -> M:
        try:
            answer = await asyncio.wait_for(fut, timeout)
        finally:
            self._rpcs.pop(rpc_id, None)
        if isinstance(answer, ResultError):
            raise DshError(answer.error.message, code=received(answer.error.code))
        return result.model_validate(answer.value)

    def post(self, method: str, args: BaseModel) -> None:
        """A request nobody waits for the answer of, sent now — what a cancelled call can still
        say (its answer, when it comes, is dropped). Nothing is raised when the link is closed."""
        _endpoint(method, args, None)
        try:
            self._send(self._request(f"x{next(_ids)}", method, args))
        except DshError:
            pass

    @staticmethod
    def _request(rpc_id: str, method: str, args: BaseModel) -> CommEnvelope:
        request = ClientRequest(rpc_id=rpc_id, method=method, payload=ArgsPayload(args=dump(args)))
        return CommEnvelope(cid=CID, envelope=dump(request))

    def open(self, endpoint: str, args: BaseModel) -> tuple[str, asyncio.Queue[Frame]]:
        """Open a stream: its id and the queue of its frames (``item`` / ``error`` / ``end``)."""
        _endpoint(endpoint, args, None)
        stream_id = f"s{next(_ids)}"
        queue: asyncio.Queue[Frame] = asyncio.Queue()
        self._streams[stream_id] = queue
        opened = StreamOpen(stream_id=stream_id, endpoint=endpoint, payload=ArgsPayload(args=dump(args)))
        self._send(CommEnvelope(cid=CID, envelope=dump(opened)))
        return stream_id, queue

    def cancel(self, stream_id: str) -> None:
        if self._streams.pop(stream_id, None) is not None:
            try:
                self._send(CommEnvelope(cid=CID, envelope=dump(StreamCancel(stream_id=stream_id))))
            except DshError:
                pass

    def receive_batch(self, items: Sequence[str | int | dict[str, JsonValue]]) -> None:
        """The host's envelopes, as the kernel batched them (an index of a binary buffer — never
        sent on this comm — and a message that is not one are passed over)."""
        for item in items:
            try:
                if isinstance(item, str):
                    message = read_server_message(item)
                elif isinstance(item, dict):
                    message = ReadMessageAdapter.validate_python(item)
                else:
                    continue
            except ValidationError:
                log.debug("a host message that is not one was passed over", exc_info=True)
                continue
            if isinstance(message, ReadResponse):
                fut = self._rpcs.get(message.rpc_id or "")
                if fut is not None and not fut.done():
                    fut.set_result(message.result)
                continue
            queue = self._streams.get(message.stream_id)
            if queue is not None:
                queue.put_nowait(message)
                if not isinstance(message, ReadItem):
                    self._streams.pop(message.stream_id, None)

    def fail_all(self, error: DshError) -> None:
        """The comm is gone: every call under way fails with ``error``, every stream errs."""
        wire_error = WireError(code=error.code, message=error.message)
        for fut in self._rpcs.values():
            if not fut.done():
                fut.set_result(ResultError(error=wire_error))
        for stream_id, queue in self._streams.items():
            queue.put_nowait(StreamError(stream_id=stream_id, error=wire_error))
        self._streams.clear()
