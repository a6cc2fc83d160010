"""A tiny stdio MCP server (JSON-RPC lines, no SDK) whose misbehaviour the tests choose:

``--junk``: print non-JSON lines on stdout before and between answers; ``--bad-schema``: one
tool whose ``inputSchema`` is not an object and one whose schema is not valid JSON Schema;
``--tools N``: N more tools ``t0`` … (each with a schema), ``--page P``: P tools per page."""

from __future__ import annotations

import argparse
import json
import sys


def tools(opts: argparse.Namespace) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {"name": "echo", "description": "echo text", "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string"}}}, "annotations": {"readOnlyHint": True}},
    ]
    if opts.bad_schema:
        out.append({"name": "broken", "description": "schema is a string", "inputSchema": "not a schema"})
        out.append({"name": "invalid", "description": "bad JSON Schema", "inputSchema": {"type": "object",
                    "properties": {"x": {"type": "no-such-type"}}}})
    for i in range(opts.tools):
        out.append({"name": f"t{i}", "description": f"tool {i} " + "d" * 200, "inputSchema": {
            "type": "object", "properties": {"a": {"type": "string", "description": "x" * 100}}}})
    out.append({"name": "last", "description": "the last tool", "inputSchema": {"type": "object"}})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--junk", action="store_true")
    parser.add_argument("--bad-schema", action="store_true")
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--page", type=int, default=0)
    opts = parser.parse_args()
    listed = tools(opts)
    if opts.junk:
        print("Server starting... (junk on stdout)", flush=True)
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, mid = msg.get("method"), msg["id"]
        if method == "initialize":
            result: object = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                              "serverInfo": {"name": "stub", "version": "1"}}
        elif method == "tools/list":
            start = int((msg.get("params") or {}).get("cursor") or 0)
            size = opts.page or len(listed)
            page = {"tools": listed[start:start + size]}
            if start + size < len(listed):
                page["nextCursor"] = str(start + size)
            result = page
        elif method == "tools/call":
            args = msg["params"].get("arguments") or {}
            result = {"content": [{"type": "text", "text": f"echo: {args.get('text', '')}"}]}
        else:
            result = {}
        if opts.junk:
            print("junk line {not json", flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)


if __name__ == "__main__":
    main()
