"""``python -m dsh_notebook mcp-bridge``: an MCP client that speaks stdio reaches the notebook server.

Claude Code, Codex and Cursor start MCP servers as commands; this one finds the running Jupyter
server (its runtime files — files of its own user that only that user can write, with the server's
token; see :func:`own_servers`) and relays: each JSON-RPC line from stdin is POSTed
to ``{url}dsh/mcp`` with the token and the MCP session id, and every message of the answer (JSON,
or the events of an SSE stream — progress notifications included) is written to stdout as one
line, as it comes. Requests run concurrently (a long ``execute_code`` does not hold up a
``read_notebook``); ``initialize`` first. A request the server refuses gets a JSON-RPC error with
its HTTP status; stdin's end closes the MCP session (DELETE) and the bridge.

Which server: ``--url URL`` (with ``--token`` or ``$JUPYTER_TOKEN``), else the running server
whose root folder holds the current directory, else the most recently started one.
"""

from __future__ import annotations

import http.client
import json
import os
import stat
import sys
import threading
from typing import IO, Any
from urllib.parse import urlsplit

from pydantic import JsonValue

from ..errors import UserError
from . import PATH


def find_server(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """``(endpoint URL, token)`` of the notebook server to relay to; ``CONNECTION`` when none runs."""
    if url:
        base = url if url.endswith("/") else url + "/"
        return base + PATH, token if token is not None else os.environ.get("JUPYTER_TOKEN", "")
    servers = own_servers()
    if not servers:
        raise UserError("no running Jupyter server of this user was found (start JupyterLab, or give --url and "
                        "--token)", code="CONNECTION")
    cwd = os.path.realpath(os.getcwd())

    def holds(s: dict[str, JsonValue]) -> bool:  # a server's runtime file (JSON)
        root = os.path.realpath(str(s.get("root_dir") or s.get("notebook_dir") or "/"))
        return cwd == root or cwd.startswith(root.rstrip(os.sep) + os.sep)

    chosen = next((s for s in reversed(servers) if holds(s)), servers[-1])
    return str(chosen["url"]) + PATH, str(chosen.get("token") or "")


def own_servers(runtime_dir: str | None = None) -> list[dict[str, JsonValue]]:
    """The running Jupyter servers of this user, oldest first: their runtime files
    (``jpserver-*.json`` in Jupyter's runtime folder), each a regular file of this user that no one
    else may write — a file another user planted (a runtime folder others can write to) would
    send the external agent, and what it reads and runs, to their server — whose process lives."""
    from jupyter_core.paths import jupyter_runtime_dir
    from jupyter_server.utils import check_pid

    folder = runtime_dir or jupyter_runtime_dir()
    try:
        names = [n for n in os.listdir(folder) if n.startswith("jpserver-") and n.endswith(".json")]
    except OSError:
        return []
    found: list[tuple[float, dict[str, JsonValue]]] = []
    for name in names:
        try:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue  # gone, or a symbolic link
        with os.fdopen(fd, encoding="utf-8") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                continue
            try:
                info = json.load(fh)
            except (ValueError, OSError):
                continue  # being written
        pid = info.get("pid") if isinstance(info, dict) else None
        if isinstance(pid, int) and isinstance(info.get("url"), str) and check_pid(pid):
            found.append((st.st_mtime, info))
    return [info for _, info in sorted(found, key=lambda f: f[0])]


class Relay:
    """stdin lines → POSTs; answers → stdout lines."""

    def __init__(self, endpoint: str, token: str, out: IO[str] | None = None) -> None:
        self.endpoint, self.token = endpoint, token
        parts = urlsplit(endpoint)
        self.scheme, self.netloc, self.path = parts.scheme, parts.netloc, parts.path or "/"
        self.out = out or sys.stdout
        self.session_id: str | None = None
        self.protocol: str | None = None
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _connection(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.netloc, timeout=None)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        if self.protocol:
            headers["mcp-protocol-version"] = self.protocol
        return headers

    def write(self, message: JsonValue) -> None:
        """One JSON-RPC message (or batch) as one line of stdout."""
        with self._lock:
            self.out.write(json.dumps(message, ensure_ascii=False) + "\n")
            self.out.flush()

    def post(self, line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "not JSON"}})
            return
        ident = message.get("id") if isinstance(message, dict) else None
        conn = self._connection()
        try:
            conn.request("POST", self.path, body=line.encode(), headers=self._headers())
            response = conn.getresponse()
            if response.getheader("mcp-session-id"):
                self.session_id = response.getheader("mcp-session-id")
            if response.status >= 400:
                body = response.read().decode(errors="replace")[:500]
                if ident is not None:
                    self.write({"jsonrpc": "2.0", "id": ident, "error": {
                        "code": -32000, "message": f"the notebook server answered HTTP {response.status}: {body}"}})
                else:
                    print(f"mcp-bridge: HTTP {response.status}: {body}", file=sys.stderr)
                return
            kind = response.getheader("content-type", "")
            if kind.startswith("text/event-stream"):
                self._events(response)
            elif kind.startswith("application/json"):
                data = response.read()
                if data.strip():
                    self._emit(json.loads(data))
        except OSError as exc:
            if ident is not None:
                self.write({"jsonrpc": "2.0", "id": ident, "error": {"code": -32000,
                                                                     "message": f"the notebook server is unreachable: {exc}"}})
        finally:
            conn.close()

    def _emit(self, message: JsonValue) -> None:
        for m in message if isinstance(message, list) else [message]:
            result = m.get("result") if isinstance(m, dict) else None
            if isinstance(result, dict) and "protocolVersion" in result:
                self.protocol = str(result["protocolVersion"])
            self.write(m)

    def _events(self, response: http.client.HTTPResponse) -> None:
        data: list[str] = []
        for raw in response:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip())
            elif not line and data:
                self._emit(json.loads("\n".join(data)))
                data = []

    def close(self) -> None:
        for thread in self._threads:
            thread.join()
        if self.session_id:
            conn = self._connection()
            try:
                conn.request("DELETE", self.path, headers=self._headers())
                conn.getresponse().read()
            except OSError:
                pass
            finally:
                conn.close()

    def run(self, stdin: IO[str]) -> int:
        for line in stdin:
            if not line.strip():
                continue
            try:
                first = json.loads(line).get("method") == "initialize"
            except (ValueError, AttributeError):
                first = False
            if first:  # the session id comes with its answer: everything else waits for it
                self.post(line)
                continue
            thread = threading.Thread(target=self.post, args=(line,), daemon=True)
            thread.start()
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        self.close()
        return 0


def cli_main(args: Any) -> int:
    """``python -m dsh_notebook mcp-bridge [--url URL] [--token T]``."""
    return main(args.url, args.token)


def main(url: str | None = None, token: str | None = None) -> int:
    endpoint, key = find_server(url, token)
    print(f"mcp-bridge: relaying stdio to {endpoint.split('?')[0]}", file=sys.stderr)
    return Relay(endpoint, key).run(sys.stdin)
