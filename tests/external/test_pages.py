"""Issue 41: a notebook open in a JupyterLab page is read and changed through that page, and the
approvals of the external calls on it show above it.

The page is faked at its boundary — the WebSocket ``{base_url}dsh/pages`` that this package's
JupyterLab extension opens — by a client speaking the same messages (the real page in Chromium:
``tests/browser/test_external_e2e.py``); the rest is real: Jupyter Server with the extension, the
kernel, the official MCP SDK client over streamable HTTP.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from .conftest import CLIENT, TOKEN, Kernel, Server, mcp_client, texts

pytestmark = [pytest.mark.integration, pytest.mark.kernel, pytest.mark.xdist_group("external-mcp")]


class FakePage:
    """A JupyterLab page as the server sees it: the notebooks it has open, its answers."""

    def __init__(self, ws: WebSocketClientConnection) -> None:
        self.ws = ws
        self.asked: list[dict[str, Any]] = []
        self.notebooks: dict[str, dict[str, Any]] = {}
        self.dirty: dict[str, bool] = {}
        self.refuse: dict[str, Any] | None = None
        self.silent = False
        self.changed = asyncio.Event()
        self._task = asyncio.ensure_future(self._serve())

    def open(self, path: str, nb: dict[str, Any], *, dirty: bool = False) -> None:
        self.notebooks[path], self.dirty[path] = nb, dirty
        self.ws.write_message(json.dumps({"kind": "open", "paths": sorted(self.notebooks)}))

    def kinds(self) -> list[str]:
        return [m["kind"] for m in self.asked]

    async def _serve(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                return
            message = json.loads(raw)
            self.asked.append(message)
            self.changed.set()
            if "id" not in message or self.silent:
                continue
            path = message["path"]
            if self.refuse is not None and message["kind"] == "apply":
                reply = {"ok": False, "error": self.refuse}
            elif message["kind"] == "read":
                reply = {"ok": True, "value": {"notebook": copy.deepcopy(self.notebooks[path]), "dirty": self.dirty[path]}}
            elif message["kind"] == "save":
                self.dirty[path] = False
                reply = {"ok": True, "value": {"saved": True, "dirty": False}}
            else:  # apply, as the page does: by cell id
                cells = self.notebooks[path]["cells"]
                for op in message["ops"]:
                    ids = [c["id"] for c in cells]
                    if op["op"] == "insert":
                        cells.insert(0 if op["after"] is None else ids.index(op["after"]) + 1, op["cell"])
                    else:
                        cells[ids.index(op["id"])] = op["cell"]
                reply = {"ok": True, "value": {"saved": not self.dirty[path], "dirty": self.dirty[path]}}
            self.ws.write_message(json.dumps({"kind": "reply", "id": message["id"], **reply}))

    async def wait_for(self, kind: str) -> dict[str, Any]:
        while True:
            found = [m for m in self.asked if m["kind"] == kind]
            if found:
                return found[-1]
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 120)

    def close(self) -> None:
        self.ws.close()
        self._task.cancel()


def _ws_url(server: Server) -> str:
    return server.url.replace("http://", "ws://") + "/dsh/pages"


async def _connect(server: Server, **headers: str) -> WebSocketClientConnection:
    return await websocket_connect(HTTPRequest(_ws_url(server), headers=headers))


@pytest.fixture
async def page(server: Server) -> AsyncIterator[FakePage]:
    fake = FakePage(await _connect(server, Authorization=f"token {TOKEN}"))
    yield fake
    fake.close()


def _opened(server: Server, kernels: list[Kernel], page: FakePage, *cells: str, mode: str = "auto") -> tuple[str, Kernel]:
    name = server.notebook(*cells)
    kernel = server.open(name)
    kernels.append(kernel)
    setting = "approve = 'auto'" if mode == "auto" else f"mode = {mode!r}"
    kernel.run(f"%load_ext dsh_notebook\n%config DshMagics.{setting}")
    nb = json.loads((server.root / name).read_text())
    for cell in nb["cells"]:  # as JupyterLab's model gives them: one string each
        cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    page.open(name, nb)
    return name, kernel


async def test_the_socket_is_refused_without_the_token_or_from_another_origin(server: Server) -> None:
    for headers in ({}, {"Authorization": "token wrong"},
                    {"Authorization": f"token {TOKEN}", "Origin": "http://evil.example"}):
        with pytest.raises(HTTPClientError) as refused:
            await _connect(server, **headers)
        assert refused.value.code == 403, headers


async def test_a_notebook_open_in_a_page_is_read_and_changed_there(
        server: Server, kernels: list[Kernel], page: FakePage) -> None:
    name, kernel = _opened(server, kernels, page, "a = 1", "b = 2")
    on_disk = (server.root / name).read_text()
    first, second = (c["id"] for c in page.notebooks[name]["cells"])
    page.notebooks[name]["cells"][1]["source"] = "b = 'typed, not saved'"
    page.dirty[name] = True
    async with mcp_client(server) as mcp:
        read = texts(await mcp.call_tool("read_notebook", {"path": name}))
        inserted = await mcp.call_tool("insert_cell", {"path": name, "cell_id": first, "source": "c = 3"})
        page.refuse = {"code": "EDIT_CONFLICT", "message": f"cell {second} was changed in JupyterLab since it was read"}
        refused = await mcp.call_tool("edit_cell", {"path": name, "cell_id": second, "source": "b = 3"})
    assert "as open in JupyterLab, with unsaved changes" in read and "b = 'typed, not saved'" in read
    assert page.kinds() == ["read", "save", "read", "apply", "save", "read", "apply"]  # saved before a write
    apply = [m for m in page.asked if m["kind"] == "apply"][0]
    (op,) = apply["ops"]
    assert op["op"] == "insert" and op["after"] == first and op["cell"]["source"] == "c = 3"
    prov = op["cell"]["metadata"]["dsh"]["provenance"]
    assert prov["client"] == CLIENT and prov["tool"] == "insert_cell"
    assert not inserted.is_error and texts(inserted).endswith("in the notebook open in JupyterLab (saved)")
    assert [c["source"] for c in page.notebooks[name]["cells"]] == ["a = 1", "c = 3", "b = 'typed, not saved'"]
    assert (server.root / name).read_text() == on_disk  # the page writes its notebook, not the server
    assert refused.is_error and texts(refused).startswith("[EDIT_CONFLICT]")
    events = server.events(kernel.session_id())
    results = [e for e in events if e["type"] == "external/result"]
    assert [r["tool"] for r in results] == ["read_notebook", "insert_cell", "edit_cell"]
    assert results[-1]["error"]["code"] == "EDIT_CONFLICT"


async def test_a_page_that_closes_before_it_answers_is_page_gone_and_the_file_is_used_after(
        server: Server, kernels: list[Kernel], page: FakePage) -> None:
    name, _ = _opened(server, kernels, page, "a = 1")
    first = page.notebooks[name]["cells"][0]["id"]
    page.silent = True
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("insert_cell", {"path": name, "cell_id": first, "source": "b = 2"}))
        await page.wait_for("save")
        page.close()
        gone = await call
        after = await mcp.call_tool("insert_cell", {"path": name, "cell_id": first, "source": "b = 2"})
    assert gone.is_error and texts(gone).startswith("[PAGE_GONE]"), texts(gone)
    assert not after.is_error and "in the notebook file" in texts(after)
    assert [c["source"] for c in server.cells(name)] == ["a = 1", "b = 2"]


async def test_an_approval_shows_on_the_page_and_its_answer_decides_the_call(
        server: Server, kernels: list[Kernel], page: FakePage) -> None:
    name, kernel = _opened(server, kernels, page, "pass", mode="default")
    async with mcp_client(server) as mcp:
        call = asyncio.ensure_future(mcp.call_tool("execute_code", {"path": name, "code": "from_banner = 7"}))
        banner = await page.wait_for("approval")
        assert banner["path"] == name and banner["tool"] == "execute_code" and banner["client"] == CLIENT
        assert banner["text"] == "from_banner = 7"
        page.ws.write_message(json.dumps({"kind": "approve", "callId": banner["callId"], "decision": "allow"}))
        ran = await call
        gone = await page.wait_for("approval-gone")
    assert not ran.is_error and kernel.run("print(from_banner)").strip() == "7"
    assert gone["callId"] == banner["callId"]
    decided = [e for e in server.events(kernel.session_id()) if e["type"] == "approval/decided"]
    assert decided[-1]["decision"] == "allow" and decided[-1]["callId"] == banner["callId"]
