"""The OS edge of a session log: one locked, append-only file descriptor per writer.

**One writer per session.** :func:`open_locked` opens the log for appending and takes an
exclusive, non-blocking ``flock`` on it, held for as long as the descriptor is open (the
:class:`~.writer.SessionLog`'s life). A second writer — another process, another kernel, or a
second descriptor in this process — gets ``SESSION_BUSY`` before it has written a byte. Readers
(``show``, ``sessions``, following a saved log) never lock, so they work while a run holds it.

**No torn line before appended ones.** :func:`append_durably` writes and fsyncs a batch from the
last good offset; when ``write`` or ``fsync`` fails (``ENOSPC``, ``EDQUOT``, ``EIO`` ...) it cuts
the file back to that offset and raises ``DISK_FULL`` / ``LOG_WRITE_FAILED`` — the caller keeps
the batch and writes it again next time, from the same offset.

Also here: :func:`ensure_private_dir` (0700 directories, coded ``BAD_HOME`` / ``PATH_TOO_LONG``) and
:func:`read_regular` (read a file only if it is a regular one, never blocking on a FIFO).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

from ..errors import LogWriteError, SessionError, UserError

__all__ = ["append_durably", "ensure_private_dir", "lock_holder", "open_locked", "read_regular",
           "write_error", "writer_of"]

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}


def lock_holder(fd: int) -> int | None:
    """The pid holding a ``flock`` on ``fd``'s file (Linux ``/proc/locks``), if it can be read."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            rows = f.read().splitlines()
    except OSError:
        return None
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for row in rows:
        parts = row.split()
        if len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == dev and parts[4].isdigit():
            return int(parts[4])
    return None


def open_locked(path: Path, *, create: bool) -> int:
    """Open ``path`` for appending (0600) with the session's writer lock, or ``SESSION_BUSY``.

    A symbolic link (``O_NOFOLLOW``), a FIFO, a device or a file with several hard links is
    refused with ``LOG_NOT_REGULAR``: the log is never written (nor its mode changed) elsewhere."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        raise SessionError(f"no session log at {path}", code="LOG_NOT_FOUND") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
            raise _not_regular(path, "a symbolic link" if exc.errno != errno.ENXIO else "a FIFO") from None
        raise write_error(exc, path, doing="open") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        raise _not_regular(path, "not a regular file" if not stat.S_ISREG(st.st_mode) else
                           f"a file with {st.st_nlink} hard links")
    os.set_blocking(fd, True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = lock_holder(fd)
        os.close(fd)
        who = "this process" if pid == os.getpid() else f"process {pid}" if pid else "another process"
        raise SessionError(
            f"session {path.stem} is being written by {who} (a run, a kernel or a host has it open). "
            "Wait for it to end or stop it; `show` and `sessions` can read the log meanwhile.",
            code="SESSION_BUSY",
        ) from None
    try:
        os.fchmod(fd, 0o600)
    except OSError:
        pass
    return fd


def _not_regular(path: Path, what: str) -> SessionError:
    return SessionError(f"the session log {path} is {what}; a session log must be a plain file of its "
                        "own under $DSH_HOME/sessions, so it is not opened (nothing was written). "
                        "Move that entry away and start or resume the session again", code="LOG_NOT_REGULAR")


def writer_of(path: Path) -> int | None:
    """The pid of the process writing ``path`` (holding its lock), read from ``/proc/locks`` —
    a probe that takes no lock, so it can never make a starting writer ``SESSION_BUSY``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return lock_holder(fd)
    finally:
        os.close(fd)


def write_error(exc: OSError, path: Path, *, doing: str = "write") -> LogWriteError:
    """An ``OSError`` at the log's edge → a coded error that says what to do."""
    if exc.errno in _FULL:
        return LogWriteError(
            f"cannot {doing} the session log {path}: the disk is full ({os.strerror(exc.errno or 0)}). "
            "Every event is kept in memory and is written at the next flush: free some space, "
            "then send the next prompt (or end the session cleanly).",
            code="DISK_FULL",
        )
    if exc.errno == errno.ENAMETOOLONG:
        return LogWriteError(f"cannot {doing} the session log: the path is too long ({len(str(path))} "
                             "characters); use a shorter DSH_HOME", code="PATH_TOO_LONG")
    return LogWriteError(
        f"cannot {doing} the session log {path}: {exc.strerror or exc}. Every event is kept in "
        "memory and is written at the next flush once the file system works again.",
        code="LOG_WRITE_FAILED",
    )


def append_durably(fd: int, data: bytes, good: int, path: Path) -> int:
    """Write ``data`` after byte ``good`` and fsync; returns the new good length.

    Whatever stands after ``good`` (a half-written batch of an earlier failure) is cut first; on a
    failure the file is cut back to ``good`` and the coded error raised (nothing torn remains).
    """
    try:
        if os.fstat(fd).st_size != good:
            os.ftruncate(fd, good)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, good)
        except OSError:
            pass  # the next append cuts it (fstat above) before writing anything
        raise write_error(exc, path) from None
    return good + len(data)


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` if needed — every missing directory on the way 0700 (so a new ``DSH_HOME``
    is private too) — and make ``path`` itself 0700. A path through a file, an unwritable or
    read-only place is ``BAD_HOME``; a name too long ``PATH_TOO_LONG``."""
    try:
        missing: list[Path] = []
        found = path
        while not found.exists():
            missing.append(found)
            found = found.parent
        if not found.is_dir():
            raise UserError(f"{found} is a file, not a directory, so {path} cannot be created: point "
                            "DSH_HOME at a directory (or remove that file)", code="BAD_HOME")
        for directory in reversed(missing):
            directory.mkdir(mode=0o700, exist_ok=True)
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except (NotADirectoryError, FileExistsError):
        raise UserError(f"{path} cannot be created: part of it is a file, not a directory; point "
                        "DSH_HOME at a directory", code="BAD_HOME") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise UserError(f"the path {str(path)[:120]}... is too long for the file system; use a "
                            "shorter DSH_HOME", code="PATH_TOO_LONG") from None
        raise UserError(f"cannot create {path}: {exc.strerror or exc} — make DSH_HOME a directory "
                        "you can write to", code="BAD_HOME") from None
    return path


def read_regular(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file; ``None`` for a FIFO, a device, a socket or a
    directory (opened non-blocking and checked before reading, so a FIFO never blocks)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)
