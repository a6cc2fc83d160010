"""The private channel to a ``local:`` server (issue 35 finding 2), without the model: a folder only
this user enters, a key per start that never leaves the process but in a header, a peer that must
be the server process started, and the worker refusing anything else. The attacks by a real
second user, on the real server, are in ``tests/realmodel/test_local_private.py``."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.agent.request import prepare_request
from dsh_notebook.config import Settings
from dsh_notebook.errors import ModelError, redact
from dsh_notebook.models.base import Finish, ModelRequest
from dsh_notebook.models.local_adapter import LocalAdapter
from dsh_notebook.models.local_channel import Channel
from dsh_notebook.models.local_server import LocalServer
from dsh_notebook.models.routing import describe_defaults
from dsh_notebook.testing import FakeOpenAIServer, text_reply
from dsh_notebook.wire.messages import user_text

REPO = Path(__file__).resolve().parents[2]

# a server of another process on the socket: it accepts, and writes down how many bytes each
# connection brought before it closed
LISTENER = textwrap.dedent("""
    import socket, sys
    path, out = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path)
    sock.listen()
    print("listening", flush=True)
    while True:
        conn, _ = sock.accept()
        got = b""
        while True:
            data = conn.recv(65536)
            if not data:
                break
            got += data
        conn.close()
        with open(out, "a") as f:
            f.write(f"{len(got)}\\n")
""")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalServer]:
    """A LocalServer whose process is a stand-in (``sleep``): the tests put a server on its socket."""
    local = LocalServer(tmp_path / "model.gguf", ctx=4096, threads=1)
    local.proc = subprocess.Popen(["sleep", "300"], stdin=subprocess.PIPE)
    local._ready = True
    try:
        yield local
    finally:
        local.stop()


def _request(model: str = "fake-model", **config: object) -> ModelRequest:
    return ModelRequest(provider="local", model=model, messages=[user_text("the conversation")],
                        config={"max_tokens": 8, **config})


def test_each_start_gets_its_own_private_folder_and_a_key_the_redaction_knows() -> None:
    one, two = Channel(), Channel()
    try:
        for channel in (one, two):
            info = channel.folder.lstat()
            assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
            assert info.st_uid == os.geteuid() and channel.socket_path.parent == channel.folder
            assert len(channel.key) >= 40 and channel.key not in redact(f"Bearer {channel.key} key={channel.key}")
        assert one.folder != two.folder and one.key != two.key
    finally:
        one.remove()
        two.remove()
    assert not one.folder.exists() and not two.folder.exists()


async def test_requests_carry_the_starts_key_and_follow_a_new_start(server: LocalServer, tmp_path: Path) -> None:
    first, second = Channel(pid=os.getpid()), Channel(pid=os.getpid())  # the fakes serve from this process
    adapter = LocalAdapter(server, "fake-model", Settings(home=tmp_path / "home"))
    try:
        for channel in (first, second):  # the second: what a restart leaves (new socket, new key)
            server.channel = channel
            with FakeOpenAIServer(api_key=channel.key, uds=str(channel.socket_path)) as fake:
                fake.enqueue(text_reply("ok"))
                assert isinstance([c async for c in adapter.stream(_request())][-1], Finish)
                assert fake.requests[-1].headers["authorization"] == f"Bearer {channel.key}"
    finally:
        await adapter.aclose()
        first.remove()
        second.remove()


@pytest.fixture
def other_process(server: LocalServer, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Another process listening on the server's socket (the server process is the ``sleep``)."""
    assert server.proc is not None
    channel = server.channel = Channel(pid=server.proc.pid)  # the process this host started
    heard = tmp_path / "heard.txt"
    other = subprocess.Popen([sys.executable, "-c", LISTENER, str(channel.socket_path), str(heard)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "listening"
        yield other, heard
    finally:
        other.kill()
        other.wait()


def _wait_for_file(path: Path) -> str:
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline:  # written once the connection closed
        time.sleep(0.05)
    return path.read_text()


async def test_a_socket_served_by_another_process_is_refused_before_a_byte_is_sent(
        server: LocalServer, other_process: tuple[subprocess.Popen[str], Path], tmp_path: Path) -> None:
    other, heard = other_process
    adapter = LocalAdapter(server, "fake-model", Settings(home=tmp_path / "home"))
    try:
        with pytest.raises(ModelError) as refused:
            _ = [c async for c in adapter.stream(_request())]
        assert (await asyncio.to_thread(_wait_for_file, heard)).split() == ["0"]  # one connection, no byte sent
    finally:
        await adapter.aclose()
    err = refused.value
    assert err.code == "LOCAL_SERVER_FAILED" and not err.retryable
    assert f"served by process {other.pid}, not by the llama.cpp server this process started" in err.message
    assert server.proc is None and server.channel is None  # stopped: the next request starts anew


@pytest.mark.parametrize("case", ["shared folder", "no key", "not a .sock"])
def test_the_worker_refuses_a_folder_others_can_enter_and_a_start_without_its_key(
        tmp_path: Path, case: str) -> None:
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o755 if case == "shared folder" else 0o700)
    folder.chmod(0o755 if case == "shared folder" else 0o700)
    sock = folder / ("server.sock" if case != "not a .sock" else "server")
    done = subprocess.run([sys.executable, "-m", "dsh_notebook.models.local_worker", "--model", "m.gguf",
                           "--socket", str(sock)], input=b"" if case == "no key" else b"k" * 43 + b"\n",
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 2 and not sock.exists()
    expected = {"shared folder": "not private", "no key": "no key on stdin", "not a .sock": "must end in .sock"}[case]
    assert expected in done.stderr.decode()


async def test_the_model_cards_sampling_is_sent_unless_an_option_sets_it(server: LocalServer, tmp_path: Path) -> None:
    channel = server.channel = Channel(pid=os.getpid())
    adapter = LocalAdapter(server, "smollm2", Settings(home=tmp_path / "home"))
    try:
        with FakeOpenAIServer(api_key=channel.key, uds=str(channel.socket_path), models=("smollm2",)) as fake:
            for given, expected in (({}, (0.2, 0.9)), ({"temperature": 0}, (0, 0.9)),
                                    ({"temperature": 1.0, "top_p": 1.0}, (1.0, 1.0))):
                route = prepare_request("local:smollm2", adapter_for=lambda _id: adapter, config=given)
                fake.enqueue(text_reply("ok"))
                _ = [c async for c in adapter.stream(_request(route.model, **route.config))]
                body = fake.requests[-1].body
                assert (body["temperature"], body["top_p"]) == expected
                assert route.header_config()["temperature"] == expected[0]  # what request/header logs
    finally:
        await adapter.aclose()
    unnamed = LocalAdapter(server, "/models/other.gguf", Settings(home=tmp_path / "home"))
    assert unnamed.default_options() == {}  # no card known: the server's own defaults
    await unnamed.aclose()
    assert describe_defaults("local:smollm2") == "temperature=0.2, top_p=0.9 (the model card's sampling; " \
                                                 "--option KEY=VALUE overrides)"
    assert describe_defaults("local:smollm2", {"temperature": 0}) == \
        "top_p=0.9 (the model card's sampling; temperature set by --option)"
    assert describe_defaults("script:auto") is None and describe_defaults("openai:gpt-4o") is None
