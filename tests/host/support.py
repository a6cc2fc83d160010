"""Test support for the host and client tests: a host on a temp home, boundary fakes of models.

The fakes sit at the model boundary (``ModelAdapter``) — never inside the code under test:

- ``HoldModel`` (``dsh_notebook.testing``): every reply streams its first chunk and holds until the
  test releases it (a ``threading.Event``), so a test can act *mid-stream* deterministically;
- ``ToolModel``: the first request of a turn answers with the given tool calls (real tools run),
  the next one with a text that quotes what the tool results said.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dsh_notebook.config import Settings, parse_model_id
from dsh_notebook.host.host import Host
from dsh_notebook.launcher import new_host
from dsh_notebook.models.base import (
    ModelAdapter,
    ModelRequest,
    StreamChunk,
)
from dsh_notebook.models.routing import resolve_adapter
from dsh_notebook.models.scripted import ScriptedModel
from dsh_notebook.testing.models import FunctionModel, call_chunks, text_chunks
from dsh_notebook.testing.models import HoldModel as HoldModel  # the host tests import it from here
from dsh_notebook.wire.messages import ToolMessage, UserMessage

KNOWN_CODES = {
    "BAD_ENVELOPE", "UNKNOWN_METHOD", "BAD_ARGS", "UNKNOWN_SESSION", "EMPTY_CONTENT",
    "UNSUPPORTED_CONTENT", "UNKNOWN_STREAM", "INTERNAL", "LINE_TOO_LONG", "DUPLICATE_RPC_ID", "REQUEST_CONFLICT",
}  # fmt: skip


def ToolModel(calls: Sequence[tuple[str, dict[str, Any]]]) -> FunctionModel:  # noqa: N802 (a model's name)
    """The first request of a turn answers with ``calls`` (ids ``t1``…), the next one with a text
    quoting what the tool results said."""

    def reply(request: ModelRequest) -> list[StreamChunk]:
        last_user = max(i for i, m in enumerate(request.messages) if isinstance(m, UserMessage) and m.source.kind == "user")
        results = [m for m in request.messages[last_user:] if isinstance(m, ToolMessage)]
        if results:
            return text_chunks("results: " + " | ".join(m.text.strip()[:40] for m in results), pieces=1, usage=False)
        return call_chunks(*((f"t{i + 1}", name, json.dumps(args)) for i, (name, args) in enumerate(calls)))

    return FunctionModel(reply, provider="tools")


class Models:
    """The adapter factory of a test host: ``script:*`` paced small, named fakes by id."""

    def __init__(self, pace: float = 0.0) -> None:
        self.pace = pace
        self.fakes: dict[str, ModelAdapter] = {}

    def __call__(self, settings: Settings, model_id: str, base_url: str | None) -> ModelAdapter:
        provider, name = parse_model_id(model_id)
        if provider == "script":
            return ScriptedModel(name, pace=self.pace)
        if provider == "fake":
            return self.fakes[name]
        return resolve_adapter(settings, model_id, base_url=base_url)


def make_host(home: Path, *, pace: float = 0.0, models: Models | None = None) -> Host:
    return new_host(Settings(home=home), adapter_factory=models or Models(pace))


class RawConn:
    """A raw host connection: send envelopes (dict or text), read what the host sends back."""

    def __init__(self, host: Host) -> None:
        self.inbox: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
        self.handler = host.connect(lambda text: self.inbox.put(json.loads(text)), caller="test")

    def send(self, message: dict[str, Any] | str | bytes) -> None:
        self.handler.receive(message if not isinstance(message, dict) else json.dumps(message))

    def next(self, timeout: float = 10.0) -> dict[str, Any]:
        return self.inbox.get(timeout=timeout)

    def until(self, pred: Callable[[dict[str, Any]], bool], timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            msg = self.next(max(0.01, deadline - time.monotonic()))
            if pred(msg):
                return msg

    def call(self, method: str, args: dict[str, Any], rpc_id: str = "r") -> dict[str, Any]:
        self.send({"type": "client-request", "rpcId": rpc_id, "method": method, "payload": {"args": args}})
        return self.until(lambda m: m.get("type") == "server-response" and m.get("rpcId") == rpc_id)


def wait_for(pred: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError("condition not reached in time")


def events_of(host: Host, session_id: str) -> list[Any]:
    """The live session's events, read on the host loop."""

    async def read() -> list[Any]:
        return list(host.registry.live[session_id].session.events)

    return host.run(read())


def wait_idle(host: Host, session_id: str, timeout: float = 30.0) -> None:
    async def idle() -> None:
        await host.registry.live[session_id].agent.wait_idle()

    host.run(idle(), timeout)
