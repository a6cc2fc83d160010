"""Client Remote (seed 001 L2, object 7): method calls built from the shared Descriptors.

``Remote(connection)`` exposes one attribute per namespace and one method per endpoint of
:data:`~dsh_notebook.host.contract.DESCRIPTORS`, so ``remote.session.prompt(request=command)``
validates the named args against the descriptor's args model, sends ``session/prompt`` with
``payload: {"args": {...}}`` through the Connection and parses the value with the descriptor's
result model. Because the host's Gateway dispatches through the same table, the two sides
cannot disagree about an endpoint, its arguments or its result.

- unary: ``remote.session.info(session_id="s_…")`` (blocking) or ``await ….acall(...)``;
- stream: ``remote.session.follow.open(on_item, session_id="s_…", cursor=None)`` → Subscription;
- learners: ``remote.session.prompt.descriptor``, ``….envelope(**args)`` (what would be sent),
  ``….last`` (the last :class:`TurnCall`: rpcId, envelope, paired response).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, JsonValue, ValidationError

from ..errors import HostError
from ..host.contract import DESCRIPTORS, Descriptor, dump
from ..wire.base import error_code
from .connection import Connection, Subscription, TurnCall

M = TypeVar("M", bound=BaseModel)


def checked(model: type[M], data: Mapping[str, object], what: str) -> M:
    """``data`` as ``model``, or the coded error the host would answer: the code the model's own
    check names (``EMPTY_CONTENT`` …), else ``BAD_ARGS``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        coded = error_code(exc)
        if coded is not None:
            raise HostError(coded[1], code=coded[0]) from None
        raise HostError(f"{what}: {exc.errors()[0].get('msg')}", code="BAD_ARGS") from None


class RemoteMethod:
    """One endpoint as a callable."""

    def __init__(self, connection: Connection, descriptor: Descriptor) -> None:
        self.connection, self.descriptor = connection, descriptor
        self.last: TurnCall | None = None

    def args(self, **kwargs: Any) -> dict[str, JsonValue]:
        """Validate ``kwargs`` (snake_case or camelCase) with the descriptor; the wire args."""
        return dump(checked(self.descriptor.args, kwargs, self.descriptor.endpoint))

    def send(self, args: BaseModel) -> TurnCall:
        """Send args already built as the descriptor's args model (checked when it was built:
        not validated again); the exchange, whose ``future`` gets the raw value."""
        if not isinstance(args, self.descriptor.args):
            raise TypeError(f"{self.descriptor.endpoint} takes {self.descriptor.args.__name__}, not {type(args).__name__}")
        self._unary()
        self.last = self.connection.request(self.descriptor.endpoint, dump(args))
        return self.last

    def envelope(self, **kwargs: Any) -> dict[str, JsonValue]:
        """The ``client-request`` this call would send (rpcId left as ``"?"``)."""
        return {"type": "client-request", "rpcId": "?", "method": self.descriptor.endpoint, "payload": {"args": self.args(**kwargs)}}

    def _result(self, value: Any) -> BaseModel:
        assert self.descriptor.result is not None
        return self.descriptor.result.model_validate(value)

    def _unary(self) -> None:
        if self.descriptor.kind != "unary":
            raise HostError(f"{self.descriptor.endpoint} is a stream; use .open()", code="BAD_ENVELOPE")

    def __call__(self, *, timeout: float | None = None, **kwargs: Any) -> Any:
        self._unary()
        self.last = self.connection.request(self.descriptor.endpoint, self.args(**kwargs))
        try:
            value = self.last.future.result(timeout)
        except TimeoutError:
            raise HostError(f"{self.descriptor.endpoint} timed out", code="TIMEOUT") from None
        return self._result(value)

    async def acall(self, **kwargs: Any) -> Any:
        import asyncio

        self._unary()
        self.last = self.connection.request(self.descriptor.endpoint, self.args(**kwargs))
        return self._result(await asyncio.wrap_future(self.last.future))

    def open(
        self,
        on_item: Callable[[Any], None],
        *,
        on_error: Callable[[HostError], None] | None = None,
        on_end: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> Subscription:
        if self.descriptor.kind != "stream":
            raise HostError(f"{self.descriptor.endpoint} is unary; call it", code="BAD_ENVELOPE")
        return self.connection.open_stream(
            self.descriptor.endpoint, self.args(**kwargs), on_item, on_error=on_error, on_end=on_end
        )

    def __repr__(self) -> str:
        d = self.descriptor
        return f"<RemoteMethod {d.endpoint} ({d.kind}) → {d.service}.{d.method}>"


class RemoteNamespace:
    def __init__(self, name: str, methods: dict[str, RemoteMethod]) -> None:
        self._name, self._methods = name, methods

    def __getattr__(self, name: str) -> RemoteMethod:
        try:
            return self._methods[name]
        except KeyError:
            raise AttributeError(f"no endpoint {self._name}/{name}") from None

    def __dir__(self) -> list[str]:
        return sorted(self._methods)


class Remote:
    """The method facade over a Connection, built from the Descriptors."""

    def __init__(self, connection: Connection, descriptors: Mapping[str, Descriptor] = DESCRIPTORS) -> None:
        self.connection = connection
        spaces: dict[str, dict[str, RemoteMethod]] = {}
        for d in descriptors.values():
            spaces.setdefault(d.namespace, {})[d.name] = RemoteMethod(connection, d)
        self._spaces = {ns: RemoteNamespace(ns, ms) for ns, ms in spaces.items()}

    def __getattr__(self, name: str) -> RemoteNamespace:
        try:
            return self._spaces[name]
        except KeyError:
            raise AttributeError(f"no namespace {name!r}") from None

    def __dir__(self) -> list[str]:
        return sorted(self._spaces)
