"""Fixtures: a real Host (own thread and loop) and a driver that talks to a widget the way the
browser does — custom messages in, batched custom messages out — with no front end."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dsh_notebook.config import settings_from_env
from dsh_notebook.host.host import Host
from dsh_notebook.launcher import new_host


@pytest.fixture
def host() -> Iterator[Host]:
    h = new_host(settings_from_env(), name="dsh-test-host")
    yield h
    h.shutdown()


class FrontEnd:
    """Plays one browser view of a widget: sends envelopes, collects what comes back."""

    def __init__(self, widget: Any, cid: str = "v_test") -> None:
        self.widget, self.cid = widget, cid
        self.batches: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._n = 0
        widget.send = self._capture  # what anywidget would put on the comm

    def _capture(self, content: dict[str, Any], buffers: Any = None) -> None:
        with self.lock:
            self.batches.append({"t": time.monotonic(), **content})

    def custom(self, content: dict[str, Any]) -> None:
        """Deliver a custom message exactly as ipywidgets does for ``model.send``."""
        self.widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})

    def envelope(self, envelope: dict[str, Any]) -> None:
        self.custom({"kind": "envelope", "cid": self.cid, "envelope": envelope})

    def call(self, method: str, args: dict[str, Any]) -> str:
        self._n += 1
        rpc = f"rpc_{self.cid}_{self._n}"
        self.envelope({"type": "client-request", "rpcId": rpc, "method": method, "payload": {"args": args}})
        return rpc

    def open(self, endpoint: str, args: dict[str, Any]) -> str:
        self._n += 1
        sid = f"st_{self.cid}_{self._n}"
        self.envelope({"type": "open", "streamId": sid, "endpoint": endpoint, "payload": {"args": args}})
        return sid

    def items(self, cid: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            batches = list(self.batches)
        out = []
        for b in batches:
            if b.get("kind") == "batch" and b.get("cid") == (cid or self.cid):
                out += [json.loads(i) if isinstance(i, str) else i for i in b["items"]]
        return out

    def response(self, rpc: str) -> dict[str, Any] | None:
        return next((i for i in self.items() if i.get("type") == "server-response" and i.get("rpcId") == rpc), None)

    def stream(self, stream_id: str) -> list[dict[str, Any]]:
        return [i for i in self.items() if i.get("streamId") == stream_id]

    def wait(self, pred: Callable[[], Any], timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = pred()
            if value:
                return value
            time.sleep(0.02)
        raise AssertionError(f"condition not met within {timeout}s; last items: {self.items()[-5:]}")


@pytest.fixture
def front_end() -> Callable[..., FrontEnd]:
    return FrontEnd
