"""The local adapter on a connection the server closed without a byte: while the server's process
lives, the request is asked once more on a new connection (llama.cpp closes kept-alive connections
of its own accord); a second hang-up is the CONNECTION error it is. A server process that has
ended is ``LOCAL_SERVER_FAILED`` (tests/realmodel: the real llama.cpp server, killed).

The server's process is a real process standing in for llama.cpp's (``sleep``), its HTTP side the
fake on the start's private Unix socket, requiring the start's key: what the adapter sees of a
server is its process and its socket."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_notebook.config import Settings
from dsh_notebook.errors import ModelError
from dsh_notebook.models.base import Finish, ModelRequest
from dsh_notebook.models.local_adapter import LocalAdapter
from dsh_notebook.models.local_channel import Channel
from dsh_notebook.models.local_server import LocalServer
from dsh_notebook.testing import FakeOpenAIServer, text_reply
from dsh_notebook.testing.openai_chunks import Reply
from dsh_notebook.wire.messages import user_text


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LocalAdapter, LocalServer, FakeOpenAIServer]]:
    server = LocalServer(tmp_path / "model.gguf", ctx=4096, threads=1)
    channel = server.channel = Channel()
    # the fake answers on the start's private socket and requires its key; it serves from this
    # process, so this process is the server the channel's peer check expects
    channel.pid = os.getpid()
    with FakeOpenAIServer(api_key=channel.key, uds=str(channel.socket_path)) as fake:
        server.proc = subprocess.Popen(["sleep", "300"], stdin=subprocess.PIPE)
        server._ready = True  # what ensure_started leaves after the server answered
        adapter = LocalAdapter(server, "fake-model", Settings(home=tmp_path / "home"))
        try:
            yield adapter, server, fake
        finally:
            server.stop()


def _request() -> ModelRequest:
    return ModelRequest(provider="local", model="fake-model", messages=[user_text("hi")], config={"max_tokens": 8})


async def test_a_hang_up_from_a_live_server_is_asked_once_more_on_a_new_connection(
        served: tuple[LocalAdapter, LocalServer, FakeOpenAIServer]) -> None:
    adapter, server, fake = served
    fake.enqueue(Reply(hang_up=True), text_reply("hello"))
    try:
        chunks = [c async for c in adapter.stream(_request())]
    finally:
        await adapter.aclose()
    assert isinstance(chunks[-1], Finish) and chunks[-1].reason == "stop"
    assert len(fake.requests) == 2 and server.ended() is None


async def test_two_hang_ups_are_a_connection_error_not_a_server_failure(
        served: tuple[LocalAdapter, LocalServer, FakeOpenAIServer]) -> None:
    adapter, _server, fake = served
    fake.enqueue(Reply(hang_up=True), Reply(hang_up=True), text_reply("never asked"))
    with pytest.raises(ModelError) as failed:
        try:
            _ = [c async for c in adapter.stream(_request())]
        finally:
            await adapter.aclose()
    assert failed.value.code == "CONNECTION" and len(fake.requests) == 2 and fake.pending == 1


async def test_a_hang_up_from_a_server_whose_process_ended_is_local_server_failed(
        served: tuple[LocalAdapter, LocalServer, FakeOpenAIServer]) -> None:
    adapter, server, fake = served
    assert server.proc is not None
    server.proc.kill()
    server.proc.wait()
    fake.enqueue(Reply(hang_up=True))
    with pytest.raises(ModelError) as failed:
        try:
            _ = [c async for c in adapter.stream(_request())]
        finally:
            await adapter.aclose()
    assert failed.value.code == "LOCAL_SERVER_FAILED" and failed.value.retryable
    assert "stopped during a request: its process ended with status -9" in str(failed.value)
    assert server.proc is None and len(fake.requests) == 1  # stopped: the next request starts a new one
