"""The client side of a recorded transcript, folded by the Python ClientSessionModel exactly as
``js/test/parity/driver.ts`` folds it with the JS one: the client's own prompt calls
(submit → accepted / rejected) and every item of its follow and control streams."""

from __future__ import annotations

from typing import Any

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.client.state import FoldState


def replay(lines: list[dict[str, Any]]) -> list[tuple[int, FoldState]]:
    """``(line index, state)`` after every line that reached the model."""
    model: ClientSessionModel | None = None
    streams: dict[str, str] = {}
    prompts: dict[str, str] = {}
    steps: list[tuple[int, FoldState]] = []
    for i, line in enumerate(lines):
        msg = line["msg"]
        if line["dir"] == "out":
            if msg["type"] == "open":
                streams[msg["streamId"]] = msg["endpoint"]
                args = (msg.get("payload") or {}).get("args") or {}
                if msg["endpoint"] == "session/follow" and model is None:
                    cursor = args.get("cursor")
                    model = ClientSessionModel(args.get("sessionId"), cursor=-1 if cursor is None else cursor)
            elif msg["type"] == "client-request" and msg["method"] == "session/prompt" and model is not None:
                req = msg["payload"]["args"]["request"]
                content = req["content"]
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                prompts[msg["rpcId"]] = req["requestId"]
                model.submit(req["requestId"], text, req.get("mode") or "queue")
                steps.append((i, model.state()))
            continue
        if model is None:
            continue
        if msg["type"] == "server-response" and msg.get("rpcId") in prompts:
            rid = prompts[msg["rpcId"]]
            if msg["result"]["ok"]:
                model.accepted(rid, msg["rpcId"])
            else:
                model.rejected(rid, msg["result"]["error"])
            steps.append((i, model.state()))
        elif msg["type"] == "item":
            endpoint = streams.get(msg["streamId"])
            if endpoint == "session/follow":
                model.apply(msg["value"])
            elif endpoint == "session/control":
                model.apply_control(msg["value"])
            else:
                continue
            steps.append((i, model.state()))
    return steps
