"""An ASGI application served from a Tornado handler (the MCP SDK's streamable HTTP inside Jupyter).

Jupyter Server is Tornado; the SDK's session manager is an ASGI callable. :func:`serve_asgi`
hands it one request after Jupyter has authenticated and authorised it: the scope from the
Tornado request (the path the app expects, the headers, the client), the body once, then an
``http.disconnect`` when the client goes away (so an SSE stream ends with it); what the app sends
is written and flushed as it comes (server-sent events reach the client at once).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

if TYPE_CHECKING:  # the ASGI types Starlette declares (the MCP SDK's server is a Starlette app)
    from starlette.types import ASGIApp, Message, Scope


async def serve_asgi(handler: RequestHandler, app: ASGIApp, path: str) -> None:
    request = handler.request
    gone = asyncio.Event()
    previous = handler.on_connection_close

    def closed() -> None:
        gone.set()
        previous()

    handler.on_connection_close = closed  # type: ignore[method-assign]
    host, _, port = request.host.rpartition(":") if ":" in request.host else (request.host, "", "80")
    scope: Scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": request.version[5:] or "1.1",
        "method": request.method, "scheme": request.protocol, "path": path, "raw_path": path.encode(),
        "query_string": request.query.encode(), "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.get_all()],
        "client": (request.remote_ip, 0), "server": (host or request.host, int(port or 80)), "state": {},
    }
    body_sent = False
    content_type = "application/json"

    async def receive() -> Message:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": request.body or b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if gone.is_set():
            return
        if message["type"] == "http.response.start":  # an ASGI message, not wire routing
            handler.set_status(message["status"])
            nonlocal content_type
            handler.clear_header("Content-Type")
            for key, value in message.get("headers", []):
                name, text = key.decode("latin-1"), value.decode("latin-1")
                if name.lower() == "content-type":
                    content_type = text
                handler.add_header(name, text)
        elif message["type"] == "http.response.body":  # an ASGI message, not wire routing
            body = message.get("body", b"")
            try:
                if body:
                    handler.write(body)
                    await handler.flush()
            except StreamClosedError:
                gone.set()
                return
            if not message.get("more_body", False):
                gone.set()

    try:
        await app(scope, receive, send)
    finally:
        gone.set()
        if not handler._finished:
            try:
                handler.finish(set_content_type=content_type)  # type: ignore[call-arg]  # APIHandler's
            except StreamClosedError:
                pass
