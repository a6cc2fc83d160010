"""File access for the file tools that can neither freeze the host nor be tricked by the file.

- :func:`run_io` runs a blocking function on a small dedicated thread pool (never the host's
  event loop) and hands it a :class:`Cancel` flag: the tool's timeout or a cancellation sets the
  flag, the function stops at its next check, and the caller is answered at once either way.
- :func:`open_regular` opens with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO opens without waiting for
  a writer, a symlink swapped in after the workspace check is refused) and then ``fstat`` s the
  descriptor — the file actually opened, not a name that may have changed (no TOCTOU): FIFOs,
  devices and sockets are refused (``SPECIAL_FILE``), and so is a file with more than one hard
  link (``HARD_LINK``), which may be the same inode as a file outside the workspace.
- :func:`read_lines` streams a file in chunks: memory stays bounded whatever the line lengths.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ...errors import ToolError

T = TypeVar("T")
CHUNK = 1 << 16
_EXECUTOR = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dsh-file-io")
_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}


class Cancel:
    """Set when the caller stopped waiting; long loops call :meth:`check`."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise ToolError("the file operation was stopped (timeout or cancellation)", code="TIMED_OUT")


async def run_io(fn: Callable[[Cancel], T]) -> T:
    """``fn(cancel)`` on the file-I/O pool; a cancellation of the caller sets ``cancel``."""
    cancel = Cancel()
    future = asyncio.get_running_loop().run_in_executor(_EXECUTOR, fn, cancel)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        cancel.set()
        raise


def describe_kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def check_regular(st: os.stat_result, name: str) -> None:
    """Refuse special files and hard-linked files (coded ``ToolError``)."""
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"{name} is a directory, not a file", code="IS_DIRECTORY")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(
            f"{name} is {describe_kind(st.st_mode)}; file tools only use regular files",
            code="SPECIAL_FILE",
        )
    if st.st_nlink > 1:
        raise ToolError(
            f"{name} has {st.st_nlink} hard links; file tools refuse hard-linked files (another "
            "link may be a file outside the workspace)",
            code="HARD_LINK",
        )


def open_regular(path: Path, flags: int, name: str, mode: int = 0o666) -> int:
    """An fd of the regular, singly linked file at ``path`` (see the module docstring)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except FileNotFoundError as exc:
        raise ToolError(f"file not found: {name}", code="FILE_NOT_FOUND") from exc
    except IsADirectoryError as exc:
        raise ToolError(f"{name} is a directory, not a file", code="IS_DIRECTORY") from exc
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO without a reader, a socket
            raise ToolError(f"{name} is a FIFO or socket; file tools only use regular files",
                            code="SPECIAL_FILE") from exc
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{name} became a symlink while it was opened; refused",
                            code="OUTSIDE_WORKSPACE") from exc
        if exc.errno == errno.ENAMETOOLONG:
            raise ToolError(f"path too long: {name[:200]}", code="INVALID_PATH") from exc
        raise ToolError(f"cannot open {name}: {exc.strerror or exc}", code="IO_ERROR") from exc
    try:
        check_regular(os.fstat(fd), name)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_all(fd: int, data: bytes) -> None:
    """Replace the content of the file open at ``fd`` (same inode, same mode but setuid and
    setgid: cleared as the kernel clears them for a writer without ``CAP_FSETID`` — root keeps
    them otherwise, and new content under a setuid-root bit is a root program; issue 35)."""
    os.ftruncate(fd, 0)
    view = memoryview(data)
    offset = 0
    while offset < len(data):
        offset += os.pwrite(fd, view[offset:], offset)
    mode = os.fstat(fd).st_mode
    if mode & (stat.S_ISUID | stat.S_ISGID):
        os.fchmod(fd, stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID))


class LineReader:
    """Lines of ``fd`` in bounded memory: at most ``keep`` bytes of each line are kept.

    :meth:`lines` yields ``(line start, whole?)``; :meth:`count_rest` counts the lines left
    without building them (``bytes.count`` per chunk). ``max_bytes`` caps the bytes read in one
    call (``truncated`` tells when the cap stopped the scan)."""

    def __init__(self, fd: int, cancel: Cancel, keep: int, max_bytes: int) -> None:
        self.fd, self.cancel, self.keep, self.max_bytes = fd, cancel, keep, max_bytes
        self.read = 0
        self.truncated = False
        self._rest = b""

    def _chunk(self) -> bytes:
        self.cancel.check()
        if self._rest:
            chunk, self._rest = self._rest, b""
            return chunk
        if self.read >= self.max_bytes:
            self.truncated = True
            return b""
        chunk = os.read(self.fd, min(CHUNK, self.max_bytes - self.read))
        self.read += len(chunk)
        return chunk

    def lines(self) -> Iterator[tuple[bytes, bool]]:
        head = bytearray()
        cut = False
        pending = False  # a line has started and not ended
        while chunk := self._chunk():
            start = 0
            while start < len(chunk):
                nl = chunk.find(b"\n", start)
                piece = chunk[start:] if nl < 0 else chunk[start:nl]
                pending = True
                room = self.keep - len(head)
                if room > 0:
                    head += piece[:room]
                if len(piece) > max(room, 0):
                    cut = True
                if nl < 0:
                    break
                self._rest = chunk[nl + 1 :]
                yield bytes(head), not cut
                chunk, start = self._rest, 0
                self._rest = b""
                head.clear()
                cut = pending = False
        if pending:
            yield bytes(head), not cut

    def count_rest(self) -> int:
        """Lines after the last one :meth:`lines` yielded (a last line without newline counts)."""
        count = 0
        tail_open = False
        while chunk := self._chunk():
            count += chunk.count(b"\n")
            tail_open = not chunk.endswith(b"\n")
        return count + (1 if tail_open else 0)
