"""Issue 41, security as attacks on the notebook's MCP server: a request without Jupyter's token (or
with a wrong one), a page on another origin that holds the token, a second local user on the same
machine — none reaches the notebook; and ``mcp-bridge`` relays for the server's own user."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, TOKEN, Kernel, Server, texts

pytestmark = [pytest.mark.integration, pytest.mark.kernel, pytest.mark.xdist_group("external-mcp")]

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "1"}}}
SECOND_USER = "dshprobe"


def post(server: Server, headers: dict[str, str], body: Any = INIT) -> tuple[int, str]:
    req = urllib.request.Request(server.endpoint, method="POST", data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_no_token_or_a_wrong_token_is_403_and_nothing_is_served(server: Server) -> None:
    assert post(server, {})[0] == 403
    assert post(server, {"Authorization": "token not-the-token"})[0] == 403
    assert post(server, {}, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                             "params": {"name": "execute_code", "arguments": {"path": "x.ipynb", "code": "1"}}})[0] == 403
    status, body = post(server, {"Authorization": f"token {TOKEN}"})
    assert status == 200 and "dsh-notebook" in body  # the same request with the token: served
    assert post(server, {"Authorization": f"Bearer {TOKEN}"})[0] == 200  # the form Cursor's config uses


def test_a_page_on_another_origin_is_refused_even_with_the_token(server: Server) -> None:
    auth = {"Authorization": f"token {TOKEN}"}
    for origin in ("http://evil.example", "http://127.0.0.1:1", "null", server.url.replace("127.0.0.1", "localhost")):
        status, body = post(server, {**auth, "Origin": origin})
        assert status == 403 and "cross-origin" in body, origin
    assert post(server, {**auth, "Origin": server.url})[0] == 200  # JupyterLab's own page


def test_a_cookie_request_from_the_browser_without_xsrf_is_refused(server: Server) -> None:
    """A form post from another page carries the cookie but not the XSRF token: Jupyter refuses it."""
    status, _ = post(server, {"Cookie": "username-127-0-0-1=forged", "Origin": server.url})
    assert status == 403


def _second_user() -> pwd.struct_passwd:
    if os.geteuid() != 0 or shutil.which("useradd") is None or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root (to add a second local user) and the system's python3")
    try:
        return pwd.getpwnam(SECOND_USER)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", SECOND_USER],
                       capture_output=True, check=False)
        return pwd.getpwnam(SECOND_USER)


def test_a_second_local_user_finds_no_token_and_gets_403(server: Server) -> None:
    """The server's runtime file holds its token; another user of the machine can list the folder
    but not read the file, and a request without the token is refused."""
    user = _second_user()
    runtime_files = sorted(server.runtime.glob("jpserver-*.json"))
    assert runtime_files and all(p.stat().st_mode & 0o077 == 0 for p in runtime_files)
    server.runtime.chmod(0o755)  # even a runtime folder others may enter does not give the token away
    probe = textwrap.dedent(f"""
        import glob, json, urllib.request, urllib.error
        found = []
        for path in glob.glob({str(server.runtime)!r} + "/jpserver-*.json"):
            try:
                found.append(json.load(open(path)).get("token"))
            except PermissionError:
                found.append("denied")
        req = urllib.request.Request({server.endpoint!r}, method="POST", data=b'{json.dumps(INIT)}',
                                     headers={{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}})
        try:
            status = urllib.request.urlopen(req, timeout=30).status
        except urllib.error.HTTPError as exc:
            status = exc.code
        print(json.dumps({{"found": found, "status": status}}))
    """)
    out = subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True, timeout=120,
                         user=user.pw_uid, group=user.pw_gid, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"found": ["denied"] * len(runtime_files), "status": 403}


async def test_mcp_bridge_relays_stdio_to_the_running_server(server: Server, kernels: list[Kernel]) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_types import Implementation

    name = server.notebook("a = 1")
    kernel = server.open(name)
    kernels.append(kernel)
    kernel.run("%load_ext dsh_notebook\n%config DshMagics.approve = 'auto'\na = 1")
    params = StdioServerParameters(command=sys.executable, args=["-m", "dsh_notebook", "mcp-bridge"], cwd=str(server.root),
                                   env={**os.environ, "JUPYTER_RUNTIME_DIR": str(server.runtime),
                                        "PYTHONPATH": str(REPO)})
    said: list[str] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        said.append(message or "")

    async with stdio_client(params) as (read, write), \
            ClientSession(read, write, client_info=Implementation(name="bridged-agent", version="2")) as mcp:
        await mcp.initialize()
        listed = texts(await mcp.call_tool("list_notebooks", {}))
        ran = await mcp.call_tool("execute_code", {"path": name, "code": "import time\nfor i in range(3):\n"
                                                   "    print('tick', i, flush=True); time.sleep(0.6)\na + 1"},
                                  progress_callback=progress)
    assert f"{name} · kernel python3" in listed
    assert not ran.is_error and texts(ran).endswith("2")
    assert said, "progress notifications reach the client through the bridge"
    calls = [e for e in server.events(kernel.session_id()) if e["type"] == "external/call"]
    assert calls[-1]["client"] == {"name": "bridged-agent", "version": "2"}


async def test_under_a_base_url_the_server_answers_at_base_url_dsh_mcp_and_the_bridge_finds_it(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """JupyterHub serves a person's JupyterLab under ``/user/<name>/``: MCP is at
    ``{base_url}dsh/mcp`` (and not at the root), and ``mcp-bridge`` finds it from the runtime file."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp_types import Implementation

    from .conftest import launch, mcp_client

    base = tmp_path_factory.mktemp("hub")
    with launch(base, base_url="/user/ada/") as hub:
        assert hub.endpoint.endswith("/user/ada/dsh/mcp")
        at_root = Server(hub.url.removesuffix("/user/ada"), hub.root, hub.runtime, hub.home, hub.log)
        root_status, _ = post(at_root, {"Authorization": f"token {TOKEN}"})
        async with mcp_client(hub) as mcp:
            listed = texts(await mcp.call_tool("list_notebooks", {}))
        hub.notebook("a = 1", name="here.ipynb")
        params = StdioServerParameters(command=sys.executable, args=["-m", "dsh_notebook", "mcp-bridge"],
                                       cwd=str(hub.root), env={**os.environ, "JUPYTER_RUNTIME_DIR": str(hub.runtime),
                                                               "PYTHONPATH": str(REPO)})
        async with stdio_client(params) as (read, write), \
                ClientSession(read, write, client_info=Implementation(name="bridged", version="1")) as bridged:
            await bridged.initialize()
            through_bridge = texts(await bridged.call_tool("list_notebooks", {}))
    assert root_status == 404  # nothing at the root: the server lives under its base_url
    assert listed == "(no notebooks)"
    assert "here.ipynb · no kernel" in through_bridge


def _listener() -> tuple[Any, list[str]]:
    """A loopback HTTP server standing in for another user's Jupyter: it records every request."""
    import http.server
    import threading

    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            seen.append(f"{self.command} {self.path} {self.headers.get('Authorization')}")
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd, seen


def _runtime_file(folder: Path, name: str, url: str, mode: int = 0o600) -> Path:
    path = folder / f"jpserver-{name}.json"
    path.write_text(json.dumps({"url": url, "token": f"planted-{name}", "pid": os.getpid(), "root_dir": "/"}))
    path.chmod(mode)
    return path


def _bridge(runtime: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dsh_notebook", "mcp-bridge"], input=json.dumps(INIT) + "\n",
                          capture_output=True, text=True, timeout=120, cwd="/",
                          env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime), "PYTHONPATH": str(REPO)})


def test_mcp_bridge_never_follows_a_runtime_file_another_user_planted(tmp_path: Path) -> None:
    """A runtime folder others can write to (a shared $JUPYTER_RUNTIME_DIR): a ``jpserver-*.json`` of
    another user, one of ours that anyone may rewrite, and a link to a file elsewhere each name a
    live process and a server that is not ours. The bridge relays to none of them (the external
    agent's reads and code would go to that server): it says no server of this user runs."""
    user = _second_user()
    httpd, seen = _listener()
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    runtime.chmod(0o1777)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    try:
        planted = _runtime_file(runtime, "planted", url)
        os.chown(planted, user.pw_uid, user.pw_gid)
        _runtime_file(runtime, "rewritable", url, mode=0o666)
        elsewhere = _runtime_file(tmp_path, "elsewhere", url)
        (runtime / "jpserver-link.json").symlink_to(elsewhere)
        refused = _bridge(runtime)
        assert refused.returncode != 0 and "CONNECTION" in refused.stderr, refused.stderr
        assert seen == []
        # the control: a runtime file of this user that only it may write is followed
        _runtime_file(runtime, "own", url)
        relayed = _bridge(runtime)
        assert seen and seen[0] == "POST /dsh/mcp token planted-own", (seen, relayed.stderr)
    finally:
        httpd.shutdown()


async def test_paths_outside_jupyters_root_are_refused_and_nothing_is_written_there(server: Server) -> None:
    """A hostile agent names notebooks outside the root folder Jupyter serves (``..``, absolute,
    percent-encoded, a home folder): each tool answers a coded error, reads nothing and writes
    nothing outside the root."""
    from .conftest import mcp_client

    outside = server.root.parent / "outside.ipynb"
    outside.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"id": "c1", "cell_type": "code", "source": "SECRET_OUTSIDE = 1", "metadata": {}, "outputs": [],
         "execution_count": None}]}))
    before = sorted(p.name for p in server.root.parent.iterdir())
    paths = ["../outside.ipynb", str(outside), "%2e%2e/outside.ipynb", "sub/../../outside.ipynb", "~/outside.ipynb",
             "../planted.ipynb"]
    async with mcp_client(server) as mcp:
        for path in paths:
            for tool, args in (("read_notebook", {"path": path}),
                               ("insert_cell", {"path": path, "source": "planted = 1"}),
                               ("edit_cell", {"path": path, "cell_id": "c1", "source": "planted = 1"}),
                               ("execute_code", {"path": path, "code": "open('/tmp/dsh-planted', 'w')"}),
                               ("session_events", {"path": path, "since_seq": -1})):
                result = await mcp.call_tool(tool, args)
                said = texts(result)
                assert result.is_error and said.startswith("["), (tool, path, said)
                assert "SECRET_OUTSIDE" not in said, (tool, path)
    _nothing_written_outside(server, outside, before)


def _nothing_written_outside(server: Server, outside: Path, before: list[str]) -> None:
    assert sorted(p.name for p in server.root.parent.iterdir()) == before
    assert "planted" not in outside.read_text()
    assert not Path("/tmp/dsh-planted").exists()
