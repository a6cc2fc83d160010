"""A real MCP server written with the official SDK (``mcp.server.MCPServer``), for the tests.

``python sdk_server.py`` serves stdio; ``python sdk_server.py --http PORT`` serves streamable HTTP
on ``127.0.0.1:PORT/mcp``. Tools: ``echo``, ``add`` (structured), ``peek`` (read-only hint),
``picture`` (an image), ``sleep`` (hangs as long as asked), ``crash`` (the process exits mid-call),
``pid`` (the server's process id, to see restarts), ``fail`` (a tool error), ``work`` (progress
notifications), ``grow`` (adds a tool and sends ``tools/list_changed``), and one with a name a
provider would refuse (``weird.name/v2``).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ImageContent, ToolAnnotations

server = MCPServer("dsh-test-server")


@server.tool(description="Echo the text back, prefixed with 'echo: '.")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two integers; returns a structured result.")
def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


@server.tool(description="Read a note without changing anything.", annotations=ToolAnnotations(readOnlyHint=True))
def peek(key: str = "greeting") -> str:
    return f"note {key}: hello"


@server.tool(description="Return a tiny PNG image.")
def picture() -> ImageContent:
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40).decode()
    return ImageContent(type="image", data=data, mime_type="image/png")


@server.tool(description="Sleep for the given seconds, then answer.")
async def sleep(seconds: float) -> str:
    mark = os.environ.get("SDK_SERVER_SLEEPING")  # a test waits for this file: the call is here
    if mark:
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, str(seconds).encode())
        os.close(fd)
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(description="Exit the server process in the middle of the call.")
def crash() -> str:
    os._exit(3)


@server.tool(description="The server's process id.")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Always fails.")
def fail() -> str:
    raise ValueError("this tool always fails")


@server.tool(name="weird.name/v2", description="A tool whose name providers refuse.")
def weird() -> str:
    return "weird ok"


@server.tool(description="Work in three steps, reporting progress.")
async def work(ctx: Context) -> str:
    for i in range(1, 4):
        await ctx.report_progress(i, 3, f"step {i}")
    return "worked"


@server.tool(description="Add a tool 'late' and tell the client the tool list changed.")
async def grow(ctx: Context) -> str:
    server.add_tool(lambda: "late ok", name="late", description="Added at run time.")
    await ctx.session.send_tool_list_changed()
    return "grown"


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
