"""Gateway and GatewayInvocation (seed 001 L3, objects 12–13), plus the trace a learner reads.

The Gateway answers one question: *which Service method does this endpoint mean?* It looks the
endpoint up in the Descriptors, validates the named args against the descriptor's model
(``BAD_ARGS``), calls ``service.method(args, invocation)`` and checks the result against the
descriptor's result model. It never looks at ``sessionId``: choosing the session is the
Controller's business. A :class:`GatewayInvocation` carries one call's caller, endpoint, rpcId
(or streamId) and cancel signal, and collects the notes the service writes about its decisions
(``resolver: live``, ``admission: accepted``…), so each call can be shown afterwards from
:class:`Tracer` records.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, JsonValue, ValidationError

from ..errors import HostError
from ..wire.base import ItemValue, dump, error_code
from .contract import Descriptor

log = logging.getLogger(__name__)
_ids = itertools.count(1)


@dataclass
class GatewayInvocation:
    """The context of one call: who, which endpoint, which rpcId/streamId, and a cancel signal."""

    caller: str
    endpoint: str
    rpc_id: str | None = None
    stream_id: str | None = None
    descriptor: Descriptor | None = None
    service_method: str | None = None
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: int = field(default_factory=lambda: time.time_ns() // 1_000_000)
    notes: dict[str, JsonValue] = field(default_factory=dict)
    id: int = field(default_factory=lambda: next(_ids))

    def note(self, key: str, value: JsonValue) -> None:
        """Record a decision taken for this call (shown in the trace)."""
        self.notes[key] = value

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "id": self.id,
            "caller": self.caller,
            "endpoint": self.endpoint,
            "rpcId": self.rpc_id,
            "streamId": self.stream_id,
            "serviceMethod": self.service_method,
            "cancelled": self.cancelled,
            "startedAt": self.started_at,
            "notes": dict(self.notes),
        }


@dataclass
class TraceRecord:
    """One message through the host: the envelope, the handler's verdict, the invocation, reply."""

    envelope: dict[str, JsonValue] | None
    verdict: str = "pending"  # "ok" or the error code the connection handler/gateway returned
    invocation: GatewayInvocation | None = None
    reply: BaseModel | None = None  # the server message that answered it (None: a stream opened)
    time: int = field(default_factory=lambda: time.time_ns() // 1_000_000)

    @property
    def endpoint(self) -> str | None:
        return self.invocation.endpoint if self.invocation else None

    def to_dict(self) -> dict[str, JsonValue]:
        inv = self.invocation
        return {
            "envelope": self.envelope,
            "verdict": self.verdict,
            "descriptor": inv.descriptor.describe() if inv and inv.descriptor else None,
            "invocation": inv.to_dict() if inv else None,
            "reply": dump(self.reply) if self.reply is not None else None,
            "time": self.time,
        }


class Tracer:
    """The last N trace records, plus hooks (called on the host thread; must not block)."""

    def __init__(self, maxlen: int = 500) -> None:
        self.records: deque[TraceRecord] = deque(maxlen=maxlen)
        self._hooks: list[Callable[[TraceRecord], None]] = []

    def on_record(self, fn: Callable[[TraceRecord], None]) -> Callable[[], None]:
        self._hooks.append(fn)
        return lambda: self._hooks.remove(fn) if fn in self._hooks else None

    def emit(self, record: TraceRecord) -> None:
        self.records.append(record)
        for fn in list(self._hooks):
            try:
                fn(record)
            except Exception:
                log.exception("trace hook failed")

    def last(self, endpoint: str | None = None) -> TraceRecord | None:
        """The most recent record (of ``endpoint`` if given)."""
        for record in reversed(self.records):
            if endpoint is None or record.endpoint == endpoint:
                return record
        return None


class StreamSink(Protocol):
    """Where a stream service method sends its frames (``item``/``error``/``end``)."""

    @property
    def closed(self) -> bool: ...
    def item(self, value: ItemValue) -> None: ...
    def error(self, error: BaseException) -> None: ...
    def end(self) -> None: ...


def _summarize(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "args"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    more = exc.error_count() - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


class Gateway:
    """Endpoint → Service method, through the Descriptors."""

    def __init__(self, descriptors: Mapping[str, Descriptor], services: Mapping[str, Any]) -> None:
        self.descriptors = dict(descriptors)
        self.services = dict(services)

    def routes(self) -> list[dict[str, str]]:
        """What a learner prints: every endpoint and the service method it reaches."""
        return [
            {"endpoint": d.endpoint, "kind": d.kind, "to": f"{d.service}.{d.method}"}
            for d in self.descriptors.values()
        ]

    def resolve(self, inv: GatewayInvocation, kind: str) -> Descriptor:
        d = self.descriptors.get(inv.endpoint)
        if d is None:
            raise HostError(f"no endpoint {inv.endpoint[:80]!r}", code="UNKNOWN_METHOD")
        if d.kind != kind:
            how = "open it as a stream" if d.kind == "stream" else "call it with client-request"
            raise HostError(f"{d.endpoint} is a {d.kind} endpoint; {how}", code="BAD_ENVELOPE")
        inv.descriptor = d
        inv.service_method = f"{d.service}.{d.method}"
        return d

    def bind(self, d: Descriptor, raw_args: Mapping[str, Any]) -> BaseModel:
        try:
            return d.args.model_validate(raw_args)
        except ValidationError as exc:
            coded = error_code(exc)  # an args model's own check names its code (EMPTY_CONTENT …)
            if coded is not None:
                raise HostError(coded[1], code=coded[0]) from None
            raise HostError(f"{d.endpoint}: {_summarize(exc)}", code="BAD_ARGS") from None

    def _method(self, d: Descriptor) -> Callable[..., Any]:
        service = self.services.get(d.service)
        if service is None:
            raise HostError(f"service {d.service!r} is not provided", code="INTERNAL")
        return getattr(service, d.method)  # type: ignore[no-any-return]

    async def call(self, inv: GatewayInvocation, raw_args: Mapping[str, Any]) -> BaseModel:
        """A unary call: returns the result, an instance of the descriptor's result model."""
        d = self.resolve(inv, "unary")
        args = self.bind(d, raw_args)
        value = await self._method(d)(args, inv)
        assert d.result is not None
        if not isinstance(value, d.result):
            value = d.result.model_validate(value)
        return value

    async def open(
        self, inv: GatewayInvocation, raw_args: Mapping[str, Any], sink: StreamSink
    ) -> Callable[[], None]:
        """A stream: the service registers ``sink`` and returns the function that detaches it."""
        d = self.resolve(inv, "stream")
        args = self.bind(d, raw_args)
        detach = await self._method(d)(args, inv, sink)
        return detach  # type: ignore[no-any-return]
