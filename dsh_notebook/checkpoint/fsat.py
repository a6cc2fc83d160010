"""A workspace opened as directory file descriptors: every name resolved one step at a time with
``O_NOFOLLOW`` from the folder above it (``openat``-style), never a path string (issue 35
finding 8: a folder swapped for a symlink while a rewind ran made root's rewind write 44 files into
a root-only folder).

The workspace itself is opened from ``/`` component by component, each ``O_NOFOLLOW``; a folder,
once opened, is kept by its descriptor — if someone renames it away and puts a symlink in its
place, writes still go into the folder that was inside the workspace, never through the link. A
symlink or a file where a folder is expected is :class:`UnsafePath`. Content goes to a temporary
name in the folder (``O_CREAT | O_EXCL | O_NOFOLLOW``) that then replaces the name (``renameat``),
so a symlink is never followed and a hard link never written through. Modes are set as a new file's
would be: ``mode & 0o777 & ~umask`` — no setuid, setgid or sticky bit ever comes back.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat

from .exclude import RESTORE_TMP

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TMP = itertools.count()


class UnsafePath(Exception):
    """A path the restore refuses: outside the workspace, or through a symlink or a file."""


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # no /proc: read it by setting it (once, at import)
    os.umask(old)
    return old


UMASK = _umask()


def new_mode(mode: int) -> int:
    """The mode a restored file or folder gets: its recorded one as a new file's (never s-bits)."""
    return mode & 0o777 & ~UMASK


def check_rel(rel: str) -> list[str]:
    """The names of a workspace-relative POSIX path, or :class:`UnsafePath`."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\0" in rel or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"not a path inside the workspace: {rel!r}")
    return parts


def _open_step(name: str, parent: int, shown: str) -> int:
    try:
        return os.open(name, _DIR, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise UnsafePath(f"{shown} is a symlink or a file, not a folder") from None
        raise


class Tree:
    """The workspace ``cwd`` (resolved) as directory descriptors, opened on demand and cached."""

    def __init__(self, cwd: str) -> None:
        self.cwd = os.path.realpath(cwd)
        fd = os.open("/", _DIR)
        try:
            for name in [p for p in self.cwd.split("/") if p]:
                nxt = _open_step(name, fd, self.cwd)
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        self._fds: dict[str, int] = {"": fd}

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def forget(self, rel: str) -> None:
        """Drop the cached descriptors of ``rel`` and below (it was removed or replaced)."""
        for key in [k for k in self._fds if k == rel or k.startswith(rel + "/")]:
            os.close(self._fds.pop(key))

    def folder(self, rel: str, *, create: bool = False) -> int:
        """The descriptor of the workspace folder ``rel`` (``""`` the root); missing folders are
        created (``create``) as ``mkdir -p`` would."""
        if rel in self._fds:
            return self._fds[rel]
        parts = check_rel(rel)
        parent = self.folder("/".join(parts[:-1]), create=create)
        try:
            fd = _open_step(parts[-1], parent, rel)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(parts[-1], new_mode(0o777), dir_fd=parent)
            except FileExistsError:
                pass
            fd = _open_step(parts[-1], parent, rel)
        self._fds[rel] = fd
        return fd

    def parent(self, rel: str, *, create: bool = False) -> tuple[int, str]:
        parts = check_rel(rel)
        return self.folder("/".join(parts[:-1]), create=create), parts[-1]

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s own status (a symlink's, not its target's), ``None`` when it does not exist."""
        try:
            fd, name = self.parent(rel)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read(self, rel: str, limit: int) -> bytes | None:
        """A regular file's bytes (at most ``limit``; ``None`` when larger, not regular or gone)."""
        fd, name = self.parent(rel)
        try:
            f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            return None
        try:
            st = os.fstat(f)
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            with os.fdopen(os.dup(f), "rb") as fh:
                data = fh.read(limit + 1)
            return data if len(data) <= limit else None
        finally:
            os.close(f)

    def names(self, rel: str) -> list[str]:
        """The names in the folder ``rel``."""
        fd = self.folder(rel) if rel else self._fds[""]
        return os.listdir(fd)

    def write(self, rel: str, kind: str, data: bytes | None, mode: int, target: str | None) -> None:
        """Put a file (``data``, ``mode``) or a symlink (``target``) at ``rel``, replacing what is
        there (not a folder)."""
        fd, name = self.parent(rel, create=True)
        tmp = f"{RESTORE_TMP}{os.getpid()}-{next(_TMP)}.tmp"
        try:
            if kind == "l":
                os.symlink(target or "", tmp, dir_fd=fd)
            else:
                f = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
                try:
                    view = memoryview(data or b"")
                    while view:
                        view = view[os.write(f, view):]
                    os.fchmod(f, new_mode(mode))
                finally:
                    os.close(f)
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass
            raise
        self.forget(rel)

    def unlink(self, rel: str) -> bool:
        """Remove the file or symlink ``rel`` itself (never a folder, never a link's target)."""
        fd, name = self.parent(rel)
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", rel)
        os.unlink(name, dir_fd=fd)
        return True

    def rmdir(self, rel: str) -> bool:
        """Remove the empty folder ``rel``; ``False`` when it is not empty (or not a folder)."""
        fd, name = self.parent(rel)
        self.forget(rel)
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.ENOENT):
                return False
            raise
        return True

    def mkdir(self, rel: str, mode: int) -> bool:
        """The folder ``rel`` with ``mode`` (created when missing: ``True``)."""
        fd, name = self.parent(rel, create=True)
        created = True
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            created = False
        os.fchmod(self.folder(rel), new_mode(mode))
        return created
