"""One sorted walk of a workspace (``lstat`` every path, read only what changed): the checkpoint's
hot path. An unchanged file reuses its index entry and its listing entry as they are."""

from __future__ import annotations

import os
import stat
from typing import Protocol

from .entry import RACY_NS, Entry, Listing
from .ignore import ALWAYS_SKIPPED, Limits


class BlobSink(Protocol):
    """Where a scan puts the contents it reads (the checkpoint store): ``(sha256, newly stored)``."""

    def put_blob(self, data: bytes) -> tuple[str, bool]: ...


class Scan:
    """One sorted walk of a workspace, reusing the index's hashes where the stat is unchanged."""

    def __init__(self, store: BlobSink, cwd: str, limits: Limits, index: dict, old: Listing,  # type: ignore[type-arg]
                 indexed_ns: int) -> None:
        self.store, self.cwd, self.limits, self.index, self.indexed_ns = store, cwd, limits, index, indexed_ns
        self.old = old
        self.patterns = bool(limits.patterns)
        self.listing: Listing = {}
        self.raw: dict[str, list[object]] = {}
        self.files = self.bytes = self.new_blobs = self.new_bytes = self.hashed = 0
        self.changed_index = False
        self.touched: list[str] = []  # paths whose entry was built anew (not reused from the index)

    def walk(self, rel: str, path: str) -> None:
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for de in entries:
            sub = f"{rel}/{de.name}" if rel else de.name
            try:
                st = de.stat(follow_symlinks=False)
            except OSError:
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if de.name in ALWAYS_SKIPPED or (self.patterns and self.limits.ignored(sub, is_dir, de.name)):
                continue
            if is_dir:
                cached = self.index.get(sub)
                if cached is not None and cached[0] == "d" and cached[1] == stat.S_IMODE(st.st_mode) and sub in self.old:
                    self.listing[sub], self.raw[sub] = self.old[sub], cached  # (a folder's mtime is not tracked)
                else:
                    self._put(sub, Entry("d", stat.S_IMODE(st.st_mode)), st)
                self.walk(sub, de.path)
            elif stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(de.path)
                except OSError:
                    continue
                self._put(sub, Entry("l", target=target), st)
            elif stat.S_ISREG(st.st_mode):
                self._file(sub, de.path, st)
            else:
                self._put(sub, Entry("f", stat.S_IMODE(st.st_mode), 0, why="special"), st)

    def _put(self, rel: str, entry: Entry, st: os.stat_result) -> None:
        self.listing[rel] = entry
        self.touched.append(rel)
        raw = [*entry.dump(), st.st_mtime_ns, st.st_ino]
        if self.index.get(rel) != raw:
            self.changed_index = True
        self.raw[rel] = raw

    def _file(self, rel: str, path: str, st: os.stat_result) -> None:
        mode, size = stat.S_IMODE(st.st_mode), st.st_size
        self.files += 1
        cached = self.index.get(rel)
        if (cached and cached[0] == "f" and cached[1] == mode and cached[2] == size and cached[6] == st.st_mtime_ns
                and cached[7] == st.st_ino and cached[3] and st.st_mtime_ns < self.indexed_ns - RACY_NS
                and self.bytes + size <= self.limits.max_total and rel in self.old):
            self.bytes += size
            self.listing[rel], self.raw[rel] = self.old[rel], cached  # unchanged: one lstat, nothing built
            return
        why = None
        if size > self.limits.max_file:
            why = "over DSH_CHECKPOINT_MAX_FILE"
        elif self.bytes + size > self.limits.max_total:
            why = "over DSH_CHECKPOINT_MAX_TOTAL"
        sha = None
        if why is None:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as fh:
                    data = fh.read()
            except OSError:
                why = "unreadable"
            else:
                self.hashed += 1
                sha, new = self.store.put_blob(data)
                size = len(data)
                self.bytes += size
                if new:
                    self.new_blobs += 1
                    self.new_bytes += size
        self._put(rel, Entry("f", mode, size, sha, why=why), st)
