"""The private channel to a ``local:`` server (issue 35 finding 2, design item 2).

What a TCP port on loopback could not give, a Unix socket in a folder of our own does:

- **no window for anyone to take the address**: the folder is made by :func:`tempfile.mkdtemp`
  (mode 0700, a fresh random name, ``mkdir`` fails if anything is there) before the server starts,
  and the server binds ``server.sock`` inside it; another user can neither create a file there nor
  connect to one (no search permission on the folder). llama.cpp's server serves a Unix socket
  when its host ends in ``.sock``; nothing listens on TCP;
- **a secret key per start** the server requires (llama.cpp's ``api_keys``): made here, handed to
  the worker on its stdin pipe (never in its argv or environment), registered with the redaction
  so no log, frame or error text carries it, and added to every request by :class:`ServerTransport`
  — a process of the same user that finds the socket gets HTTP 401;
- **the host checks who answers**: every connection's peer credentials (``SO_PEERCRED`` on Linux,
  ``LOCAL_PEERPID`` on macOS) must name the server process this host started, before a byte of a
  request is written; any other peer is refused (:class:`PeerRefused`) and the connection closed.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import struct
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpcore2
import httpx2

from ..errors import register_secret

SOCKET_NAME = "server.sock"
BASE_URL = "http://llama-server.localhost/v1"  # the host is never resolved: requests go to the socket
_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


class PeerRefused(httpcore2.ConnectError):
    """The socket is served by a process other than the server this host started."""


def private_folder() -> Path:
    """A fresh folder only this user can enter (0700), short enough for a socket path in it."""
    base = tempfile.gettempdir()
    if len(os.path.join(base, "dsh-llama-xxxxxxxx", SOCKET_NAME)) > _MAX_SOCKET_PATH:
        base = "/tmp"  # a long $TMPDIR: sockets need short paths
    folder = Path(tempfile.mkdtemp(prefix="dsh-llama-", dir=base))
    info = folder.lstat()
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:  # mkdtemp promises both; checked, never assumed
        shutil.rmtree(folder, ignore_errors=True)
        raise OSError(f"{folder} is not private to this user")
    return folder


def peer_pid(sock: socket.socket) -> int | None:
    """The process id of the peer of a connected Unix socket (``None``: the OS cannot say)."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}, as at the peer's listen()
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", raw)[0])
    if sys.platform == "darwin":  # SOL_LOCAL = 0, LOCAL_PEERPID = 2
        return int(struct.unpack("i", sock.getsockopt(0, 2, 4))[0])
    return None


@dataclass
class Channel:
    """One start's address and key: ``folder/server.sock``, the server process's id once known."""

    folder: Path = field(default_factory=private_folder)
    key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    pid: int | None = None
    refused: str | None = None  # why a connection was refused (another process on the socket)

    def __post_init__(self) -> None:
        register_secret(self.key)

    @property
    def socket_path(self) -> Path:
        return self.folder / SOCKET_NAME

    @property
    def log_path(self) -> Path:
        return self.folder / "server.log"

    def check(self, sock: socket.socket) -> None:
        """Refuse a connection whose peer is not the server process (:class:`PeerRefused`)."""
        pid = peer_pid(sock)
        if self.pid is None or (pid is not None and pid != self.pid):
            self.refused = (f"{self.socket_path} is served by process {pid}, not by the llama.cpp server this "
                            f"process started ({self.pid}); refused before sending anything")
            raise PeerRefused(self.refused)

    def transport(self) -> httpx2.AsyncHTTPTransport:
        """An HTTP transport to this channel's socket that checks each connection's peer."""
        return _CheckedTransport(self)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class _CheckedBackend(httpcore2.AsyncNetworkBackend):
    """anyio's network backend, Unix sockets only, each connection's peer checked first."""

    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.inner = httpcore2.AnyIOBackend()

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        stream = await self.inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        try:
            self.channel.check(stream.get_extra_info("socket"))
        except BaseException:
            await stream.aclose()
            raise
        return stream

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore2.AsyncNetworkStream:
        raise httpcore2.ConnectError("a local: server is reached through its socket only, never TCP")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class _CheckedTransport(httpx2.AsyncHTTPTransport):
    """httpx2's own transport (its error mapping and response streams) on a pool whose network
    backend checks peers (httpx2 takes no backend argument, so its pool is replaced)."""

    def __init__(self, channel: Channel) -> None:
        super().__init__(uds=str(channel.socket_path))
        self._pool = httpcore2.AsyncConnectionPool(uds=str(channel.socket_path), network_backend=_CheckedBackend(channel),
                                                   max_keepalive_connections=4, keepalive_expiry=5.0)


class ServerTransport(httpx2.AsyncBaseTransport):
    """The transport of a local adapter's HTTP client: each request goes to the current start of
    ``holder``'s server (its socket, checked) with that start's key; a new start gets a new transport."""

    def __init__(self, holder: Any) -> None:
        self.holder = holder  # has ``.channel: Channel | None`` (a LocalServer)
        self._channel: Channel | None = None
        self._inner: httpx2.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        channel = self.holder.channel
        if channel is None:
            raise httpx2.ConnectError("the local server is not running", request=request)
        if channel is not self._channel or self._inner is None:
            old, self._inner, self._channel = self._inner, channel.transport(), channel
            if old is not None:
                await old.aclose()
        request.headers["authorization"] = f"Bearer {channel.key}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        inner, self._inner, self._channel = self._inner, None, None
        if inner is not None:
            await inner.aclose()
