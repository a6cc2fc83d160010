"""The MCP server's typed seams (issue 41), in process: nbformat notebooks as TypedDicts, the IOPub
outputs they keep, the page's cell ops, and the wire link's requests and answers by endpoint model."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_notebook.errors import DshError
from dsh_notebook.external.cells import iopub_output, merge_streams, output_parts
from dsh_notebook.external.ipynb import Notebook, as_notebook
from dsh_notebook.external.kernel_messages import Output, is_read
from dsh_notebook.external.notebooks import cell_ops, new_cell, set_provenance
from dsh_notebook.external.wirelink import WireLink
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.comm import CommEnvelope
from dsh_notebook.wire.endpoints import Decided, SessionInfo, SessionRef
from dsh_notebook.wire.events import ExternalClient
from dsh_notebook.wire.external import CellProvenance
from dsh_notebook.wire.external_pages import CellInsert, CellReplace

pytestmark = pytest.mark.unit


def _notebook() -> dict[str, Any]:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {"name": "python3"}}, "cells": [
        {"id": "a", "cell_type": "code", "metadata": {}, "source": ["x = 1\n", "x"], "execution_count": 1,
         "outputs": [{"output_type": "execute_result", "execution_count": 1, "data": {"text/plain": "1"},
                      "metadata": {}}]},
        {"id": "b", "cell_type": "markdown", "metadata": {}, "source": "# hi", "attachments": {}},
    ]}


def test_a_notebook_is_validated_as_nbformat_4_and_keeps_the_keys_it_does_not_name() -> None:
    raw = _notebook()
    raw["cells"][0]["x-future"] = {"kept": True}  # a key of another minor version
    nb = as_notebook(raw, "n.ipynb")
    assert nb == raw and nb["cells"][0]["cell_type"] == "code"
    bad = _notebook()
    del bad["cells"][1]["metadata"]
    with pytest.raises(DshError) as refused:
        as_notebook(bad, "n.ipynb")
    assert refused.value.code == "BAD_NOTEBOOK_FILE" and "cells.1" in refused.value.message
    with pytest.raises(DshError):
        as_notebook({**_notebook(), "cells": [{"id": "c", "cell_type": "sql", "metadata": {}, "source": ""}]}, "n")


def test_the_page_gets_an_insert_after_an_id_and_a_replace_that_expects_the_source_read() -> None:
    was: Notebook = as_notebook(_notebook(), "n.ipynb")
    now: Notebook = as_notebook(_notebook(), "n.ipynb")
    prov = CellProvenance(client=ExternalClient(name="codex", version="1"), call_id="x1", session_id="s_1",
                          tool="insert_cell", time="2025-01-01T00:00:00Z")
    added = new_cell("code", "y = 2", {})
    set_provenance(added, prov)
    now["cells"].insert(1, added)
    edited = new_cell("raw", "plain", now["cells"][2]["metadata"], cell_id="b")
    now["cells"][2] = edited
    insert, replace = cell_ops(was, now)
    assert isinstance(insert, CellInsert) and insert.after == "a"
    assert insert.cell["outputs"] == [] and insert.cell["execution_count"] is None
    assert insert.cell["metadata"] == {"dsh": {"provenance": dump(prov)}}
    assert isinstance(replace, CellReplace) and replace.id == "b" and replace.expect == "# hi"
    assert replace.cell == {"id": "b", "cell_type": "raw", "metadata": {}, "source": "plain"}
    assert json.loads(json.dumps(dump(insert)))["after"] == "a"
    assert dump(CellInsert(after=None, cell={}))["after"] is None  # first: sent as null


def _iopub(msg_type: str, content: dict[str, Any]) -> Any:
    header = {"msg_id": "m", "msg_type": msg_type, "session": "s", "username": "u", "date": "", "version": "5.3"}
    return {"header": header, "parent_header": {"msg_id": "p"}, "metadata": {}, "msg_type": msg_type, "content": content}


def test_iopub_outputs_become_the_outputs_a_notebook_keeps() -> None:
    stream1 = _iopub("stream", {"name": "stdout", "text": "a"})
    stream2 = _iopub("stream", {"name": "stdout", "text": "b\n"})
    result = _iopub("execute_result", {"execution_count": 3, "data": {"text/plain": "42", "image/png": "iVBO\nRw=="},
                                       "metadata": {}})
    update = _iopub("update_display_data", {"data": {"text/plain": "later"}, "metadata": {}, "transient": {}})
    assert all(is_read(m) for m in (stream1, stream2, result, update))
    assert not is_read(_iopub("execute_input", {"code": "1"})) and not is_read({"msg_type": "stream"})
    outputs: list[Output] = []
    for msg in (stream1, stream2, result, update):
        out = iopub_output(msg)
        if out is not None:
            outputs.append(out)
    merged = merge_streams(outputs)
    assert merged[0] == {"output_type": "stream", "name": "stdout", "text": "ab\n"}
    image, text = output_parts(merged[1])
    assert (image.kind, image.mime, image.data) == ("image", "image/png", "iVBORw==") and text.text == "42"
    assert len(merged) == 2  # the display update is not an output of its own


async def test_a_wire_request_is_the_endpoints_args_and_its_answer_the_endpoints_result() -> None:
    sent: list[CommEnvelope] = []
    link = WireLink(sent.append)
    info = link.rpc("session/info", SessionRef(session_id="s_1"), SessionInfo)
    (request,) = sent
    assert request.cid == "mcp" and request.envelope["method"] == "session/info"
    assert request.envelope["payload"] == {"args": {"sessionId": "s_1"}}
    rpc_id = request.envelope["rpcId"]
    value = {"sessionId": "s_1", "cwd": "/w", "model": "scripted", "approve": "auto", "status": "idle", "lastSeq": 9}
    link.receive_batch([json.dumps({"type": "server-response", "rpcId": rpc_id, "result": {"ok": True, "value": value}}),
                        "not json", 3])
    answered = await info
    assert isinstance(answered, SessionInfo) and answered.last_seq == 9
    refused = link.rpc("session/info", SessionRef(session_id="s_2"), SessionInfo)
    link.receive_batch([{"type": "server-response", "rpcId": sent[-1].envelope["rpcId"],
                         "result": {"ok": False, "error": {"code": "UNKNOWN_SESSION", "message": "no s_2"}}}])
    with pytest.raises(DshError) as error:
        await refused
    assert error.value.code == "UNKNOWN_SESSION"
    cut = link.rpc("session/info", SessionRef(session_id="s_3"), SessionInfo)
    link.fail_all(DshError("the comm closed", code="CONNECTION"))
    with pytest.raises(DshError) as closed:
        await asyncio.wait_for(cut, 5)
    assert closed.value.code == "CONNECTION"
    with pytest.raises(TypeError):  # session/info answers SessionInfo, not Decided
        link.rpc("session/info", SessionRef(session_id="s_1"), Decided)

