"""The external agents' messages as wire models (issue 41): the JupyterLab pages' socket and the
kernel's ``dsh.external`` comm are typed where they arrive, and the page's TypeScript is generated."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_notebook.wire.base import dump
from dsh_notebook.wire.comm import CommBatch, CommEnvelope
from dsh_notebook.wire.events import ExternalClient
from dsh_notebook.wire.external_kernel import (
    InspectAsk,
    KernelHello,
    KernelReply,
    NotebookAsk,
    read_from_kernel,
    read_to_kernel,
)
from dsh_notebook.wire.external_pages import (
    ApprovalShown,
    PageApprove,
    PageNotebook,
    PageReply,
    PageSaved,
    PagesOpen,
    read_from_page,
)
from dsh_notebook.wire.schema import wire_schema

ROOT = Path(__file__).resolve().parents[2]
PAGE_ROOTS = ("PageFromServer", "PageToServer", "PageNotebook", "PageSaved", "CellProvenance")


def test_a_pages_messages_are_typed_and_a_reply_that_is_none_answers_its_ask_with_a_code() -> None:
    assert read_from_page('{"kind":"open","paths":["a.ipynb"]}') == PagesOpen(paths=("a.ipynb",))
    assert read_from_page('{"kind":"approve","callId":"x1","decision":"deny"}') == \
        PageApprove(call_id="x1", decision="deny")
    read = read_from_page(json.dumps({"kind": "reply", "id": 4, "ok": True,
                                      "value": {"notebook": {"cells": []}, "dirty": True}}))
    assert isinstance(read, PageReply) and read.value == PageNotebook(notebook={"cells": []}, dirty=True)
    saved = read_from_page('{"kind":"reply","id":5,"ok":true,"value":{"saved":false,"dirty":true}}')
    assert isinstance(saved, PageReply) and saved.value == PageSaved(saved=False, dirty=True)
    bad = read_from_page('{"kind":"reply","id":6,"ok":true,"value":{"saved":"maybe"}}')
    assert isinstance(bad, PageReply) and bad.id == 6 and not bad.ok
    assert bad.error is not None and bad.error.code == "BAD_ENVELOPE" and "reload it" in bad.error.message
    for stray in ("not json", "[]", '{"kind":"open"}', '{"kind":"nonsense","id":1}', '{"kind":"reply","id":"x"}'):
        assert read_from_page(stray) is None, stray


def test_an_approval_banner_is_sent_camel_case_with_its_client() -> None:
    shown = ApprovalShown(call_id="x1", path="a.ipynb", tool="execute_code", client=ExternalClient(name="claude-code"),
                          session_id="s_1", text="print(1)")
    assert dump(shown) == {"kind": "approval", "callId": "x1", "path": "a.ipynb", "tool": "execute_code",
                           "client": {"name": "claude-code"}, "sessionId": "s_1", "text": "print(1)"}


def test_the_kernel_comm_messages_are_typed_on_both_ends() -> None:
    envelope = {"kind": "envelope", "cid": "mcp", "envelope": {"type": "cancel", "streamId": "s1"}}
    assert isinstance(read_to_kernel(envelope), CommEnvelope)
    assert read_to_kernel({"kind": "notebook", "id": "r1"}) == NotebookAsk(id="r1")
    assert read_to_kernel({"kind": "inspect", "id": "r2", "name": "df"}) == InspectAsk(id="r2", name="df")
    assert read_to_kernel({"kind": "inspect", "id": "r3"}) is None  # no name: not an ask
    assert read_from_kernel({"kind": "hello", "pid": 7, "version": "0.1.0"}) == KernelHello(pid=7, version="0.1.0")
    reply = read_from_kernel({"kind": "reply", "id": "r1", "ok": False, "error": {"code": "BAD_ARGS", "message": "m"}})
    assert isinstance(reply, KernelReply) and reply.error is not None and reply.error.code == "BAD_ARGS"
    assert isinstance(read_from_kernel({"kind": "batch", "cid": "mcp", "items": ["{}"]}), CommBatch)
    assert read_from_kernel({"kind": "hello"}) is None


def test_the_labextension_types_are_generated_for_every_page_message() -> None:
    """``labextension/src/pages.gen.ts`` declares every type the page socket's roots reach (``make
    types`` writes it; ``npm run check:types`` compares it byte for byte)."""
    defs = wire_schema()["$defs"]
    assert isinstance(defs, dict)
    reached: set[str] = set()
    todo = list(PAGE_ROOTS)
    while todo:
        name = todo.pop()
        if name in reached or name == "JsonValue":
            continue
        reached.add(name)
        todo += re.findall(r'"#/\$defs/([^"]+)"', json.dumps(defs[name]))
    generated = (ROOT / "labextension" / "src" / "pages.gen.ts").read_text(encoding="utf-8")
    declared = set(re.findall(r"^export (?:interface|type) (\w+)", generated, re.MULTILINE)) - {"JsonValue"}
    assert declared == reached
