"""The Jupyter Server extension: MCP over streamable HTTP at ``{base_url}dsh/mcp`` (issue 41).

Enabled by installing the package (the wheel installs
``etc/jupyter/jupyter_server_config.d/dsh_notebook.json``, as JupyterLab extensions do;
``jupyter server extension list`` shows it). The handler is a Jupyter API handler, so Jupyter
Server authenticates and authorises every request itself — its identity provider (the token, or
JupyterLab's cookie with its XSRF check) and its authorizer: a caller must be allowed to execute
in kernels and to read and write contents (``@authorized``); without a token the answer is 403.
Jupyter skips its own Origin check for token-authenticated requests, so this handler checks
``Origin`` itself: a request that names an origin other than the server's own is refused (403) —
a page on another site cannot drive the notebook even with a leaked token, while MCP clients
(which send no ``Origin``) and JupyterLab's own page pass. Jupyter's ``Host`` check (DNS
rebinding) applies as to every handler.

The MCP protocol itself (sessions, JSON-RPC, SSE) is the official SDK's
:class:`~mcp.server.streamable_http_manager.StreamableHTTPSessionManager`, served through
:mod:`.asgi` on Tornado.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.application import ExtensionApp
from tornado import web
from typing_extensions import TypedDict

from . import PAGES_PATH, PATH
from .asgi import serve_asgi
from .mcpapp import NotebookMcp
from .pages import PagesHandler


class McpHandler(APIHandler):
    """``{base_url}dsh/mcp``: POST (JSON-RPC), GET (the server's event stream), DELETE (end a session)."""

    auth_resource = "kernels"

    def initialize(self, mcp: NotebookMcp) -> None:
        self.mcp = mcp

    def check_same_origin(self) -> None:
        origin = self.request.headers.get("Origin")
        if origin is None:
            return
        own = f"{self.request.protocol}://{self.request.host}"
        parts = urlsplit(origin)
        if f"{parts.scheme}://{parts.netloc}".lower() != own.lower():
            raise web.HTTPError(403, f"cross-origin request from {origin[:100]} refused")

    async def _serve(self) -> None:
        self.check_same_origin()
        await self.mcp.start()
        await serve_asgi(self, self.mcp.manager.handle_request, "/mcp")

    @web.authenticated
    @authorized("execute", resource="kernels")
    @authorized("read", resource="contents")
    @authorized("write", resource="contents")
    async def post(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized("execute", resource="kernels")
    @authorized("read", resource="contents")
    @authorized("write", resource="contents")
    async def get(self) -> None:
        await self._serve()

    @web.authenticated
    @authorized("execute", resource="kernels")
    @authorized("read", resource="contents")
    @authorized("write", resource="contents")
    async def delete(self) -> None:
        await self._serve()


class ExternalAgentsApp(ExtensionApp):
    """The extension: the MCP handler, and the MCP server's lifecycle."""

    name = "dsh_notebook"
    load_other_extensions = True

    def initialize_settings(self) -> None:
        self.mcp = NotebookMcp(self.serverapp)

    def initialize_handlers(self) -> None:
        self.handlers.append((rf"/{PATH}/?", McpHandler, {"mcp": self.mcp}))
        self.handlers.append((rf"/{PAGES_PATH}/?", PagesHandler, {"pages": self.mcp.pages}))

    async def stop_extension(self) -> None:
        await self.mcp.stop()


class ExtensionPoint(TypedDict):
    """What Jupyter Server reads of an extension: its module, and its app."""

    module: str
    app: type[ExtensionApp]


def _jupyter_server_extension_points() -> list[ExtensionPoint]:
    return [{"module": "dsh_notebook.external.server", "app": ExternalAgentsApp}]
