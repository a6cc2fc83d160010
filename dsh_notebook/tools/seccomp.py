"""A seccomp filter for the bash sandbox: no file it makes can carry setuid or setgid (issue 35).

As root the sandbox's uid maps to host uid 0, so a file a command makes is root's. A run as an
unprivileged host uid was measured and rejected: that uid cannot write the user's (root-owned)
workspace without changing the ownership of the user's files. So the bits are refused instead:
the filter makes every syscall that sets a file mode fail with ``EPERM`` when the mode carries
``S_ISUID`` or ``S_ISGID`` — ``chmod``, ``fchmod``, ``fchmodat``, ``fchmodat2``, and the creating
calls whose mode lands on a new file: ``open``, ``openat``, ``creat``, ``mknod``, ``mknodat``.
``openat2`` (its mode is in a struct the filter cannot read) and ``io_uring_setup`` (whose ring
can open files with any mode) answer ``ENOSYS``, which their callers treat as "not here" and fall
back from. A write to an existing setuid file clears the bit itself (no ``CAP_FSETID`` inside),
``chown`` and file capabilities need capabilities the sandbox has not got, and a hard link or a
rename into the workspace crosses a mount (``EXDEV``). The same filter applies to every user.

The program is built by libseccomp (``libseccomp.so.2``, part of every Debian/Ubuntu system:
``apt`` itself depends on it), for the native architecture and its 32-bit ABIs, and handed to
bwrap as a file descriptor (``--seccomp FD``): :func:`filter_fd`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import platform
import stat
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["BLOCKED_BITS", "MODE_ARG", "available", "filter_fd", "program", "unavailable_reason"]

BLOCKED_BITS = stat.S_ISUID | stat.S_ISGID
# syscall -> index of its mode argument
MODE_ARG = {"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2, "open": 2, "openat": 3,
            "creat": 1, "mknod": 1, "mknodat": 2}
NOT_HERE = ("openat2", "io_uring_setup")  # ENOSYS: the mode is out of the filter's reach
_FALLBACK_NR = {"fchmodat2": 452}  # newer than some libseccomp releases; same number on every arch
_ACT_ALLOW = 0x7FFF0000
_CMP_MASKED_EQ = 7
_COMPAT_ARCHES = {"x86_64": (0x40000003, 0x4000003E), "aarch64": (0x40000028,)}  # i386, x32; arm


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def _library() -> ctypes.CDLL:
    try:  # the soname first: find_library runs ldconfig (or a compiler) in a subprocess
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or "libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


def _syscall(lib: ctypes.CDLL, name: str) -> int | None:
    nr = int(lib.seccomp_syscall_resolve_name(name.encode()))
    if nr >= 0:
        return nr
    return _FALLBACK_NR.get(name)


def _build() -> bytes:
    lib = _library()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        for arch in _COMPAT_ARCHES.get(platform.machine(), ()):
            lib.seccomp_arch_add(ctx, arch)  # a 32-bit ABI the kernel lacks is simply not added
        refuse = _act_errno(errno.EPERM)
        for name, index in MODE_ARG.items():
            nr = _syscall(lib, name)
            if nr is None:
                continue
            for bit in (stat.S_ISUID, stat.S_ISGID):
                cmp = (_ArgCmp * 1)(_ArgCmp(index, _CMP_MASKED_EQ, bit, bit))
                rc = lib.seccomp_rule_add_array(ctx, refuse, nr, 1, cmp)
                if rc < 0 and rc != -errno.EDOM:  # EDOM: not a syscall of this architecture (aarch64: chmod)
                    raise OSError(-rc, f"seccomp rule for {name}: {os.strerror(-rc)}")
        for name in NOT_HERE:
            nr = _syscall(lib, name)
            if nr is not None:
                rc = lib.seccomp_rule_add_array(ctx, _act_errno(errno.ENOSYS), nr, 0, None)
                if rc < 0 and rc != -errno.EDOM:
                    raise OSError(-rc, f"seccomp rule for {name}: {os.strerror(-rc)}")
        fd = os.memfd_create("dsh-seccomp-build")
        try:
            rc = lib.seccomp_export_bpf(ctx, fd)
            if rc < 0:
                raise OSError(-rc, f"seccomp_export_bpf: {os.strerror(-rc)}")
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


@lru_cache(maxsize=1)
def _cached() -> tuple[bytes | None, str]:
    try:
        return _build(), ""
    except (OSError, AttributeError) as exc:
        return None, f"libseccomp is not usable here ({exc}); apt-get install libseccomp2"


def program() -> bytes | None:
    """The compiled BPF program (``struct sock_filter[]``), or ``None`` where libseccomp is missing."""
    return _cached()[0]


def available() -> bool:
    return program() is not None


def unavailable_reason() -> str:
    return _cached()[1]


@contextlib.contextmanager
def filter_fd() -> Iterator[int | None]:
    """A fresh descriptor holding :func:`program` at offset 0, for ``bwrap --seccomp FD`` (pass it
    with ``pass_fds``); closed on exit. ``None`` where there is no program."""
    data = program()
    if data is None:
        yield None
        return
    fd = os.memfd_create("dsh-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)
