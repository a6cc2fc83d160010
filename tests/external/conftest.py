"""A real Jupyter Server with this package's extension, real kernels, the official MCP SDK client.

``jupyter_server`` runs on a free 127.0.0.1 port with every Jupyter directory isolated (its
runtime folder in a shared temp folder a second local user can enter, as a user's own is), the
extension enabled as the wheel's config file enables it, kernels importing this checkout, and
``DSH_HOME`` in a temp dir. Each test opens its own notebook with its own kernel (a Jupyter
session, as JupyterLab makes one) and talks to ``{url}dsh/mcp`` with ``mcp.ClientSession`` over
streamable HTTP; :class:`Kernel` runs code in that kernel as the notebook would (its own client).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
TOKEN = "dsh-external-token"
SECRET = "sk-extsecret-" + "7f3a9c2e5b1d8046" * 2
CLIENT = {"name": "pytest-agent", "version": "9.9"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, url: str, root: Path, runtime: Path, home: Path, log: Path) -> None:
        self.url, self.root, self.runtime, self.home, self.log = url, root, runtime, home, log
        self.endpoint = f"{url}/dsh/mcp"

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"{self.url}{path}", method=method, data=data,
                                     headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def notebook(self, *sources: str, name: str | None = None) -> str:
        """A notebook file with these code cells (``#md`` first line: a markdown cell)."""
        import nbformat
        from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

        name = name or f"nb-{uuid.uuid4().hex[:8]}.ipynb"
        cells = [new_markdown_cell(s[3:].lstrip()) if s.startswith("#md") else new_code_cell(s) for s in sources]
        nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "language": "python",
                                                                          "display_name": "Python 3"}}), self.root / name)
        return name

    def open(self, name: str) -> Kernel:
        """Open ``name`` with a kernel, as JupyterLab does (a Jupyter session)."""
        s = self.api("/api/sessions", "POST", {"path": name, "name": name, "type": "notebook",
                                                "kernel": {"name": "python3"}})
        kid = s["kernel"]["id"]
        deadline = time.time() + 120
        while True:  # a client's readiness check fails while the kernel's heartbeat is not up yet
            try:
                return Kernel(self, kid)
            except RuntimeError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)

    def cells(self, name: str) -> list[dict[str, Any]]:
        cells = json.loads((self.root / name).read_text())["cells"]
        for c in cells:  # a saved source may be a list of lines
            c["source"] = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        return list(cells)

    def events(self, session_id: str) -> list[dict[str, Any]]:
        lines = (self.home / "sessions" / f"{session_id}.jsonl").read_text().splitlines()[1:]
        return [json.loads(x) for x in lines if x.strip()]


class Kernel:
    """The notebook's kernel, run as the person's cells run it (a client of its own)."""

    def __init__(self, server: Server, kernel_id: str) -> None:
        from jupyter_client import BlockingKernelClient

        self.server, self.id = server, kernel_id
        self.client = BlockingKernelClient()
        self.client.load_connection_file(str(server.runtime / f"kernel-{kernel_id}.json"))
        self.client.start_channels()
        try:
            self.client.wait_for_ready(timeout=120)
        except RuntimeError:
            self.client.stop_channels()
            raise

    def ready_again(self, timeout: float = 120) -> None:
        """After Jupyter restarted the kernel: its shell answers ``kernel_info`` and its IOPub reaches
        this client again. ``wait_for_ready`` also checks the heartbeat and gives up ("Kernel died
        before replying to kernel_info") when the new process's heartbeat lags under load; the
        shell's answer is what this client needs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg_id = self.client.kernel_info()
            try:
                while self.client.get_shell_msg(timeout=2)["parent_header"].get("msg_id") != msg_id:
                    pass
            except queue.Empty:
                continue
            # IOPub subscribed to the new process: the status of a request sent now reaches us (a
            # message of the old process still queued says nothing — a run sent on it lost its output)
            while time.monotonic() < deadline:
                probe = self.client.kernel_info()
                until = time.monotonic() + 2
                while time.monotonic() < until:
                    try:
                        if self.client.get_iopub_msg(timeout=0.5)["parent_header"].get("msg_id") == probe:
                            return
                    except queue.Empty:
                        continue
        raise AssertionError(f"the restarted kernel did not answer within {timeout} s")

    def run(self, code: str, timeout: float = 120) -> str:
        """Run ``code`` as a cell; its text output (stdout, results, errors)."""
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            c = msg["content"]
            if msg["msg_type"] == "stream":
                out.append(c["text"])
            elif msg["msg_type"] in ("execute_result", "display_data"):
                out.append(c["data"].get("text/plain", ""))
            elif msg["msg_type"] == "error":
                out.append("\n".join(c["traceback"]))

        self.client.execute_interactive(code, output_hook=hook, timeout=timeout)
        return "".join(out)

    def session_id(self) -> str:
        return self.run("print(get_ipython().magics_manager.registry['DshMagics'].current_session)").strip()

    def approve(self, call_id: str, decision: str = "allow") -> None:
        """Answer an approval as the widget's button does (``session/approve``)."""
        self.run(f"_m = get_ipython().magics_manager.registry['DshMagics']\n"
                 f"_m.link.approve(_m.current_session, {call_id!r}, {decision!r})")

    def close(self) -> None:
        self.client.stop_channels()


@contextlib.contextmanager
def launch(base: Path, *flags: str, base_url: str = "/") -> Iterator[Server]:
    root, state, home = base / "root", base / "state", base / "dsh_home"
    runtime = base / "runtime"
    for d in (root, state / "config", home):
        d.mkdir(parents=True, exist_ok=True)
    (state / "config" / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {"jupyter_lsp": False}}}))
    # enabled as the wheel's own config file enables it (etc/jupyter/jupyter_server_config.d)
    confd = state / "config" / "jupyter_server_config.d"
    confd.mkdir()
    shutil.copy(REPO / "jupyter-config" / "jupyter_server_config.d" / "dsh_notebook.json", confd)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("DSH_MODEL", "DSH_BASE_URL")}
    env.update(JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_RUNTIME_DIR=str(runtime),
               JUPYTER_DATA_DIR=str(state / "data"), IPYTHONDIR=str(state / "ipython"), JUPYTER_PLATFORM_DIRS="1",
               DSH_HOME=str(home), OPENAI_API_KEY=SECRET, DSH_CHECKPOINTS="1",
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    for attempt in range(3):
        port = _free_port()
        log = base / f"server-{attempt}.log"
        with open(log, "w") as fh:
            proc = subprocess.Popen(
                [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                 "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
                 f"--ServerApp.base_url={base_url}", "--allow-root", *flags], env=env, stdout=fh,
                stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}{base_url.rstrip('/')}"
            deadline = time.time() + 90
            while True:
                try:
                    urllib.request.urlopen(f"{url}/api/status?token={TOKEN}").close()
                    break
                except OSError:
                    if proc.poll() is not None or time.time() > deadline:
                        break
                    time.sleep(0.2)
            if proc.poll() is not None:
                if "already in use" in log.read_text(errors="replace"):
                    continue
                raise RuntimeError(f"jupyter_server did not start; see {log}")
            server = Server(url, root, runtime, home, log)
            yield server
            with contextlib.suppress(OSError):
                for k in server.api("/api/kernels"):
                    server.api(f"/api/kernels/{k['id']}", "DELETE")
            return
        finally:
            proc.kill()
            proc.wait(timeout=20)
    raise RuntimeError("jupyter_server did not start on a free port")


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    base = Path(tempfile.mkdtemp(prefix="dsh-ext-"))
    base.chmod(0o755)  # a second local user may enter it (the runtime files keep their own modes)
    try:
        with launch(base, "--KernelRestarter.restart_limit=0") as srv:
            yield srv
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def kernels() -> Iterator[list[Kernel]]:
    opened: list[Kernel] = []
    yield opened
    for k in opened:
        k.close()
        with contextlib.suppress(OSError):
            k.server.api(f"/api/kernels/{k.id}", "DELETE")


@contextlib.asynccontextmanager
async def mcp_client(server: Server, *, token: str = TOKEN) -> AsyncIterator[Any]:
    """An ``mcp.ClientSession`` over streamable HTTP with Jupyter's token."""
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    async with httpx.AsyncClient(headers={"Authorization": f"token {token}"}, timeout=300) as http, \
            streamable_http_client(server.endpoint, http_client=http) as (read, write, *_), \
            ClientSession(read, write, client_info=Implementation(**CLIENT)) as session:
        await session.initialize()
        yield session


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")
