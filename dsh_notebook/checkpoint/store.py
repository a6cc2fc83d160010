"""The checkpoint store under ``$DSH_HOME/checkpoints/`` (content addressed, incremental).

- ``blobs/ab/cdef…``: file contents by sha256, written once (deduplicated), 0600;
- ``snapshots/<id>.json``: one snapshot as a delta on its parent (a full listing again when the
  deltas since the last one weigh as much, or after :data:`FULL_EVERY`), so a turn that changed
  ``k`` files costs about ``k`` entries;
- ``workspaces/<key>/index.json``: the workspace's index, as git's: per path its size,
  ``mtime_ns``, inode and mode with the hash, so an unchanged file costs one ``lstat``; a file
  whose mtime is not clearly older than the scan that recorded it ("racy") is hashed again.
  A checkpoint appends only the entries it changed to ``index.log``; every :data:`JOURNAL_MAX`
  lines the index is written whole again.

Every folder is 0700, every file 0600; a write that fails (a full disk) leaves no temporary file
behind and raises a coded :class:`CheckpointError` (``DISK_FULL``, ``IO_ERROR``). What
:mod:`.exclude` names (``$DSH_HOME`` with this store, what the sandbox hides) is never snapshotted.
A listing maps a workspace-relative POSIX path to an
:class:`Entry`: a file (mode, size, sha — or ``why`` it is not restorable), a symlink (its
target, never followed) or a directory (mode). Blocking I/O: call it off the host loop.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..session.logfile import ensure_private_dir
from .entry import Entry, Listing, Snapshot, io_error
from .exclude import excluded_paths
from .ignore import Limits, limits_for
from .scan import Scan

FULL_EVERY = 200  # deltas at most between two full listings
FULL_ENTRY_BYTES = 100  # about the bytes of one entry in a full listing


def workspace_key(cwd: str) -> str:
    return hashlib.sha256(os.path.realpath(cwd).encode()).hexdigest()[:20]


def _write_private(path: Path, data: bytes) -> None:
    """``data`` at ``path`` (0600) through a temporary name: whole or not at all, and a failed
    write (a full disk) removes its temporary file before the error goes on."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_regular(path: Path) -> bytes | None:
    """A regular file's bytes (never a FIFO's or through a symlink), or ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    except OSError:
        return None
    finally:
        os.close(fd)


class CheckpointStore:
    """Blobs, snapshots and per-workspace indexes under ``home/checkpoints``."""

    def __init__(self, home: str | Path) -> None:
        self.home = Path(home)
        self.root = Path(home) / "checkpoints"
        self._lock = threading.RLock()
        self._dirs: set[Path] = set()
        self._listings: dict[str, Listing] = {}  # snapshot id -> full listing (small LRU)
        self._indexes: dict[str, tuple[tuple[int, int], dict[str, Any], Listing]] = {}  # workspace dir -> (stamp, index, listing)

    # -- folders and blobs --------------------------------------------------------------------
    def _dir(self, path: Path) -> Path:
        if path not in self._dirs:
            ensure_private_dir(path)
            self._dirs.add(path)
        return path

    def blob_path(self, sha: str) -> Path:
        return self.root / "blobs" / sha[:2] / sha[2:]

    def put_blob(self, data: bytes) -> tuple[str, bool]:
        sha = hashlib.sha256(data).hexdigest()
        path = self.blob_path(sha)
        if path.exists():
            return sha, False
        self._dir(path.parent)
        _write_private(path, data)
        return sha, True

    def read_blob(self, sha: str) -> bytes | None:
        """The blob's bytes, or ``None`` when it is missing, not a regular file or does not hash
        to ``sha`` (corrupt)."""
        if len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
            return None
        data = read_regular(self.blob_path(sha))
        return data if data is not None and hashlib.sha256(data).hexdigest() == sha else None

    def excluded(self, cwd: str) -> frozenset[str]:
        """The paths of the workspace ``cwd`` no checkpoint of this store covers (:mod:`.exclude`)."""
        return excluded_paths(cwd, self.home, self.root)

    # -- snapshots ----------------------------------------------------------------------------
    def _snap_path(self, snap_id: str) -> Path:
        if not snap_id or not all(c in "0123456789abcdef" for c in snap_id):
            raise UserError(f"bad snapshot id {snap_id!r}", code="CHECKPOINT_NOT_FOUND")
        return self.root / "snapshots" / f"{snap_id}.json"

    def listing(self, snap_id: str) -> Listing:
        """The full listing of a snapshot (its delta chain applied)."""
        with self._lock:
            if snap_id in self._listings:
                return dict(self._listings[snap_id])
            chain: list[dict[str, Any]] = []
            cur: str | None = snap_id
            while cur is not None:
                if cur in self._listings:
                    break
                try:
                    doc = json.loads(read_regular(self._snap_path(cur)) or b"")
                except ValueError:
                    raise UserError(f"checkpoint {cur} is missing or unreadable under {self.root}",
                                    code="CHECKPOINT_NOT_FOUND") from None
                chain.append(doc)
                cur = doc.get("parent") if "changes" in doc else None
            listing: Listing = dict(self._listings[cur]) if cur is not None else {}
            for doc in reversed(chain):
                if "files" in doc:
                    listing = {p: Entry.load(v) for p, v in doc["files"].items()}
                else:
                    for p, v in doc["changes"].items():
                        if v is None:
                            listing.pop(p, None)
                        else:
                            listing[p] = Entry.load(v)
            self._remember(snap_id, listing)
            return dict(listing)

    def _remember(self, snap_id: str, listing: Listing) -> None:
        self._listings[snap_id] = listing
        while len(self._listings) > 8:
            self._listings.pop(next(iter(self._listings)))

    def _write_snapshot(self, cwd: str, parent: str | None, chain: tuple[int, int], old: Listing,
                        new: Listing, touched: list[str] | None = None,
                        gone: list[str] | None = None) -> tuple[str, tuple[int, int]]:
        """Write a snapshot: a delta on ``parent``, or a full listing when there is no parent or the
        deltas since the last full one (``chain``: their count and bytes) reach :data:`FULL_EVERY`
        or the size of a full listing — so the store grows by about the changes, and reading a
        snapshot back reads at most about two full listings. Returns its id and the new chain."""
        depth, size = chain
        if parent is None or depth >= FULL_EVERY or size >= FULL_ENTRY_BYTES * max(len(new), 10):
            doc: dict[str, object] = {"v": 1, "cwd": cwd, "parent": None,
                                      "files": {p: e.dump() for p, e in sorted(new.items())}}
        else:
            maybe = set(touched) if touched is not None else set(new)  # a scan names what it built anew
            maybe.update(gone if gone is not None else (p for p in old if p not in new))
            changes = {p: (new[p].dump() if p in new else None) for p in sorted(maybe) if old.get(p) != new.get(p)}
            doc = {"v": 1, "cwd": cwd, "parent": parent, "changes": changes}
        body = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
        snap_id = hashlib.sha256(body).hexdigest()[:24]
        path = self._snap_path(snap_id)
        self._dir(path.parent)
        if not path.exists():
            _write_private(path, body)
        self._remember(snap_id, dict(new))
        return snap_id, ((0, 0) if doc["parent"] is None else (depth + 1, size + len(body)))

    def save_listing(self, cwd: str, listing: Listing) -> str:
        """Store a listing made of known blobs (not the workspace's head) as a full snapshot."""
        with self._lock:
            return self._write_snapshot(os.path.realpath(cwd), None, (0, 0), {}, listing)[0]

    # -- taking one ---------------------------------------------------------------------------
    def take(self, cwd: str, limits: Limits | None = None, cancel: threading.Event | None = None) -> Snapshot:
        """Snapshot the workspace ``cwd`` now (stat walk; only changed files are read); a coded
        :class:`CheckpointError` when the store cannot be written (``DISK_FULL`` …) or ``cancel``
        is set (``INTERRUPTED``)."""
        cwd = os.path.realpath(cwd)
        if not os.path.isdir(cwd):
            raise UserError(f"the workspace {cwd} is not a directory", code="BAD_CWD")
        limits = limits or limits_for(cwd)
        excluded = self.excluded(cwd)
        try:
            return self._take(cwd, limits, excluded, cancel)
        except OSError as exc:
            raise io_error(exc, f"checkpoint of {cwd}") from None

    def _take(self, cwd: str, limits: Limits, excluded: frozenset[str], cancel: threading.Event | None) -> Snapshot:
        with self._lock:
            wdir = self._dir(self.root / "workspaces" / workspace_key(cwd))
            index, old = self._index(wdir)
            files: dict[str, Any] = index.get("files", {})
            started = time.time_ns()
            scan = Scan(self, cwd, limits, files, old, int(index.get("taken_ns", 0)), excluded, cancel).run()
            parent = index.get("head")
            chain = (int(index.get("depth", 0)), int(index.get("chain", 0)))
            if parent is not None and not scan.changed:
                snap_id = parent
                self._remember(snap_id, scan.listing)
            else:
                snap_id, chain = self._write_snapshot(cwd, parent, chain, old, scan.listing, scan.touched, scan.gone)
            if scan.changed_index or scan.hashed or snap_id != parent:  # re-hashed racy files: trust them now
                meta = {"v": 1, "cwd": cwd, "head": snap_id, "taken_ns": started, "depth": chain[0], "chain": chain[1]}
                changed = {p: scan.raw[p] for p in scan.touched if files.get(p) != scan.raw[p]}
                self._save_index(wdir, index, meta, scan.raw, changed, scan.gone, scan.listing)
            return Snapshot(snap_id, cwd, scan.listing, scan.files, scan.bytes, scan.new_blobs,
                            scan.new_bytes, scan.hashed)

    # -- the index: a base file and a journal of changed entries ------------------------------
    def _index(self, wdir: Path) -> tuple[dict[str, Any], Listing]:
        """The workspace's index and its listing: ``index.json`` plus the entries ``index.log``
        changed since (a torn last line ignored). Kept in memory while both files are the ones
        this process wrote (another process's writes are read again)."""
        base, journal = wdir / "index.json", wdir / "index.log"
        key = _stamp(base, journal)
        cached = self._indexes.get(str(wdir))
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        index = _load_json(base)
        files = index.setdefault("files", {})
        try:
            lines = journal.read_bytes().splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                rec = json.loads(line)
            except ValueError:
                break  # a torn tail: the entries after it are re-hashed next time
            files.update(rec.get("set", {}))
            for p in rec.get("del", []):
                files.pop(p, None)
            index.update(rec.get("meta", {}))
        index["journal"] = len(lines)
        return index, {p: Entry.load(v) for p, v in files.items()}

    def _save_index(self, wdir: Path, index: dict[str, Any], meta: dict[str, Any], raw: dict[str, list[Any]],
                    changed: dict[str, list[Any]], gone: list[str], listing: Listing) -> None:
        base, journal = wdir / "index.json", wdir / "index.log"
        index.update(meta)
        index["files"] = raw
        if not base.exists() or int(index.get("journal", 0)) >= JOURNAL_MAX:
            _write_private(base, json.dumps({**meta, "files": raw}, separators=(",", ":")).encode())
            if journal.exists():
                journal.unlink()
            index["journal"] = 0
        else:
            line = json.dumps({"meta": meta, "set": changed, "del": gone}, separators=(",", ":")).encode() + b"\n"
            fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                good = os.fstat(fd).st_size
                try:
                    view = memoryview(line)
                    while view:
                        view = view[os.write(fd, view):]
                except OSError:
                    os.ftruncate(fd, good)  # no torn line left (a full disk): the entries are re-hashed next time
                    raise
            finally:
                os.close(fd)
            index["journal"] = int(index.get("journal", 0)) + 1
        self._indexes[str(wdir)] = (_stamp(base, journal), index, listing)


JOURNAL_MAX = 64  # journal lines before the index is written whole again


def _stamp(base: Path, journal: Path) -> tuple[int, int]:
    try:
        b = base.stat().st_mtime_ns
    except OSError:
        b = -1
    try:
        j = journal.stat().st_size
    except OSError:
        j = -1
    return b, j


def _load_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_bytes())
        return doc if isinstance(doc, dict) and doc.get("v") == 1 else {}
    except (OSError, ValueError):
        return {}
