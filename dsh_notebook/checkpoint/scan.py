"""One sorted walk of a workspace (``lstat`` every path, read only what changed): the checkpoint's
hot path. The new listing and index start as copies of the old ones (two C-level dict copies), so
an unchanged file costs one ``lstat``, one dict lookup and a few integer comparisons — no object is
built for it; only changed, new and gone paths are written. Ignored folders are not entered, nor
excluded ones (:mod:`.exclude`: ``$DSH_HOME``, what the sandbox hides).

``.git`` is not workspace content, but two parts of it run programs later — ``.git/config``
(``core.fsmonitor``, ``diff.external``, aliases …) and ``.git/hooks/`` — so they are walked
(no ignore rule applies there), and a turn that plants a hook shows it as a change and a rewind
takes it back (issue 35 finding 11). A ``.git`` file (a worktree's or submodule's pointer) or
symlink is recorded as it is. A scan checks ``cancel`` at every folder (a cancelled turn stops it)."""

from __future__ import annotations

import os
import threading
from operator import attrgetter
from stat import S_ISDIR, S_ISLNK, S_ISREG
from typing import Any, Protocol

from .entry import RACY_NS, CheckpointError, Entry, Listing
from .exclude import RESTORE_TMP
from .ignore import ALWAYS_SKIPPED, EMPTY, GITIGNORE, Limits, Rules, read_gitignore

_NAME = attrgetter("name")


class BlobSink(Protocol):
    """Where a scan puts the contents it reads (the checkpoint store): ``(sha256, newly stored)``."""

    def put_blob(self, data: bytes) -> tuple[str, bool]: ...


class Scan:
    """One sorted walk of a workspace, reusing the index's hashes where the stat is unchanged.

    After :meth:`run`: ``listing`` / ``raw`` the new listing and index entries, ``touched`` the
    paths built anew, ``gone`` the paths of the old index that are no more (deleted or now ignored),
    ``changed_index`` whether the index must be written."""

    def __init__(self, store: BlobSink, cwd: str, limits: Limits, index: dict[str, Any], old: Listing,
                 indexed_ns: int, excluded: frozenset[str] = frozenset(),
                 cancel: threading.Event | None = None) -> None:
        if len(old) != len(index):  # not the listing of this index: trust nothing (hash everything)
            index, old = {}, {}
        self.store, self.cwd, self.limits, self.index, self.indexed_ns = store, cwd, limits, index, indexed_ns
        self.old = old
        self.listing: Listing = dict(old)
        self.raw: dict[str, Any] = dict(index)
        self.files = self.bytes = self.new_blobs = self.new_bytes = self.hashed = 0
        self.changed_index = False
        self.touched: list[str] = []  # paths whose entry was built anew (not reused from the index)
        self.gone: list[str] = []
        self._met: set[str] = set()  # paths of the old index met again
        self.excluded, self.cancel = excluded, cancel

    def run(self) -> Scan:
        self.walk("", self.cwd)
        if len(self._met) != len(self.index):  # something of the old index is gone: find what
            self.gone = [p for p in self.index if p not in self._met]
            for p in self.gone:
                self.listing.pop(p, None)
                self.raw.pop(p, None)
            self.changed_index = True
        return self

    @property
    def changed(self) -> bool:
        """Whether the listing differs from the old one."""
        return bool(self.gone) or any(self.old.get(p) != self.listing[p] for p in self.touched)

    def walk(self, rel: str, path: str, rules: Rules | None = None, *, plain: bool = False) -> None:
        """Walk the folder ``path`` (workspace-relative ``rel``); ``plain``: no ignore rule, no
        ``.gitignore`` read (inside ``.git/hooks``)."""
        if self.cancel is not None and self.cancel.is_set():
            raise CheckpointError("the checkpoint was cancelled (its turn was stopped)", code="INTERRUPTED")
        rules = self.limits.rules if rules is None else rules
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=_NAME)  # sorted: the total cap falls on the same files each time
        except OSError:
            return
        if self.limits.gitignore and not plain:
            for de in entries:
                if de.name == GITIGNORE:
                    rules = rules.below(rel, read_gitignore(path))
                    break
        check = rules.any_dir is not None
        prefix = f"{rel}/" if rel else ""
        index_get, met = self.index.get, self._met.add
        racy, max_total = self.indexed_ns - RACY_NS, self.limits.max_total
        files, nbytes = self.files, self.bytes
        folders: list[tuple[str, str]] = []
        excluded = self.excluded
        git: list[tuple[str, str]] = []
        for de in entries:
            name = de.name
            sub = prefix + name
            if excluded and sub in excluded or name.startswith(RESTORE_TMP):
                continue
            if name in ALWAYS_SKIPPED and not plain:
                if de.is_dir(follow_symlinks=False):
                    git.append((sub, de.path))
                    continue  # only its config and hooks, after this folder's own entries
            elif check and rules.ignored(sub, de.is_dir(follow_symlinks=False)):
                continue
            try:
                st = de.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = st.st_mode
            cached = index_get(sub)
            if cached is not None:
                met(sub)
            if S_ISREG(mode):
                files += 1
                if cached is not None:  # git's index check: the same lstat as when it was hashed
                    mtime, size = st.st_mtime_ns, st.st_size
                    if (cached[6] == mtime and cached[2] == size and cached[7] == st.st_ino and cached[1] == mode & 0o7777
                            and cached[0] == "f" and cached[3] and mtime < racy and nbytes + size <= max_total):
                        nbytes += size
                        continue  # unchanged: listing and index already hold it
                self.bytes = nbytes
                self._file(sub, de.path, st)
                nbytes = self.bytes
            elif S_ISDIR(mode):
                if cached is None or cached[0] != "d" or cached[1] != mode & 0o7777:
                    self._put(sub, Entry("d", mode & 0o7777), st)  # (a folder's mtime is not tracked)
                folders.append((sub, de.path))
            elif S_ISLNK(mode):
                try:
                    target = os.readlink(de.path)
                except OSError:
                    continue
                if cached is None or cached[0] != "l" or cached[4] != target:
                    self._put(sub, Entry("l", target=target), st)
            elif cached is None or cached[5] != "special":
                self._put(sub, Entry("f", mode & 0o7777, 0, why="special"), st)
        self.files, self.bytes = files, nbytes
        for sub, full in folders:
            self.walk(sub, full, rules, plain=plain)
        for sub, full in git:
            self.walk_git(sub, full)

    def walk_git(self, rel: str, path: str) -> None:
        """The parts of a ``.git`` folder that run programs: ``config`` and ``hooks/``."""
        for name in ("config", "hooks"):
            sub, full = f"{rel}/{name}", os.path.join(path, name)
            if self.excluded and sub in self.excluded:
                continue
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if S_ISDIR(st.st_mode):
                self.walk(sub, full, EMPTY, plain=True)
            elif S_ISREG(st.st_mode) or S_ISLNK(st.st_mode):
                self._one(sub, full, st)

    def _one(self, sub: str, full: str, st: os.stat_result) -> None:
        """One file or symlink met outside a folder's walk (``.git/config``)."""
        cached = self.index.get(sub)
        if cached is not None:
            self._met.add(sub)
        if S_ISLNK(st.st_mode):
            try:
                target = os.readlink(full)
            except OSError:
                return
            if cached is None or cached[0] != "l" or cached[4] != target:
                self._put(sub, Entry("l", target=target), st)
            return
        self.files += 1
        if (cached is not None and cached[6] == st.st_mtime_ns and cached[2] == st.st_size and cached[7] == st.st_ino
                and cached[1] == st.st_mode & 0o7777 and cached[0] == "f" and cached[3]
                and st.st_mtime_ns < self.indexed_ns - RACY_NS):
            self.bytes += st.st_size
            return
        self._file(sub, full, st)

    def _put(self, rel: str, entry: Entry, st: os.stat_result) -> None:
        self.listing[rel] = entry
        self.touched.append(rel)
        raw = [*entry.dump(), st.st_mtime_ns, st.st_ino]
        if self.index.get(rel) != raw:
            self.changed_index = True
        self.raw[rel] = raw

    def _file(self, rel: str, path: str, st: os.stat_result) -> None:
        mode, size = st.st_mode & 0o7777, st.st_size
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
