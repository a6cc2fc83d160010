"""What a checkpoint records: an :class:`Entry` per workspace path, a listing of them, and the
:class:`Snapshot` one checkpoint returns."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Any

from ..errors import DshError, ErrorCode

RACY_NS = 100_000_000  # mtimes within 100 ms of the scan that recorded them are re-hashed next time


@dataclass(frozen=True)
class Entry:
    kind: str  # "f" file | "l" symlink | "d" directory
    mode: int = 0
    size: int = 0
    sha: str | None = None  # file: content hash ; symlink: None
    target: str | None = None  # symlink target
    why: str | None = None  # file not restorable: over-file-cap | over-total-cap | unreadable | special

    def dump(self) -> list[object]:
        return [self.kind, self.mode, self.size, self.sha, self.target, self.why]

    @classmethod
    def load(cls, raw: list[Any]) -> Entry:
        kind, mode, size, sha, target, why = raw[:6]
        return cls(str(kind), int(mode), int(size), sha, target, why)


Listing = dict[str, Entry]
FULL_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG})


class CheckpointError(DshError):
    """A checkpoint or a rewind could not be done; ``code`` says why (``DISK_FULL``, ``IO_ERROR``,
    ``INTERRUPTED``, ``CHECKPOINT_NOT_FOUND`` …)."""

    code: ErrorCode = "CHECKPOINT_FAILED"


def failure(path: str, why: str, *, code: ErrorCode) -> tuple[str, str]:
    """One path a rewind could not restore, as it is reported: ``(path, "CODE: why")``."""
    return path, f"{code}: {why}"


def io_error(exc: OSError, doing: str) -> CheckpointError:
    """An ``OSError`` of the checkpoint store as a coded error (a full disk is ``DISK_FULL``)."""
    if exc.errno in FULL_ERRNOS:
        return CheckpointError(f"{doing}: the disk is full ({exc.strerror})", code="DISK_FULL")
    return CheckpointError(f"{doing}: {exc.strerror or exc}", code="IO_ERROR")


@dataclass
class Snapshot:
    id: str
    cwd: str
    listing: Listing
    files: int = 0
    bytes: int = 0
    new_blobs: int = 0
    new_bytes: int = 0
    hashed: int = 0

    @property
    def unrestorable(self) -> list[str]:
        return sorted(p for p, e in self.listing.items() if e.kind == "f" and e.why)
