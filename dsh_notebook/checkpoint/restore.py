"""Put a workspace back as a listing says, safely.

A plan compares the target listing (the checkpoint) with the current one: files and symlinks to
write or remove, directories to create or remove. A path whose current state differs from the
state the agent left it in (``last``: the listing at the end of the last turn) was changed
outside the agent: it is a **conflict**, left alone unless ``force``.

Applying never writes outside the workspace: every relative path is checked (no ``..``, not
absolute), every parent folder is ``lstat``-ed (a symlinked folder is refused, ``UNSAFE_PATH``),
and content goes to a temporary file in the folder that then *replaces* the name — so a symlink
is never followed and a hard link is never written through (the other names keep their bytes).
A missing or corrupt blob fails that file only; the rest is restored.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from .store import CheckpointStore, Entry, Listing


@dataclass
class Plan:
    writes: list[tuple[str, Entry]] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    mkdirs: list[tuple[str, Entry]] = field(default_factory=list)
    rmdirs: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    unrestorable: list[tuple[str, str]] = field(default_factory=list)  # path, why

    @property
    def empty(self) -> bool:
        return not (self.writes or self.removes or self.mkdirs or self.rmdirs)


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # path, why (blob missing, unsafe path …)


def plan_restore(target: Listing, current: Listing, last: Listing | None, *,
                 only: set[str] | None = None, force: bool = False) -> Plan:
    out = Plan()
    for path in sorted(set(target) | set(current)):
        if only is not None and path not in only:
            continue
        want, have = target.get(path), current.get(path)
        if want == have:
            continue
        if want is not None and want.kind == "d":
            if have is None or have.kind != "d" or have.mode != want.mode:
                out.mkdirs.append((path, want))
            if have is not None and have.kind != "d":
                out.removes.append(path)
            continue
        if have is not None and have.kind == "d":
            out.rmdirs.append(path)
            if want is None:
                continue
        if not force and last is not None and _file(have) != _file(last.get(path)):
            out.conflicts.append(path)  # changed outside the agent since the last turn
            if have is not None and have.kind == "d":
                out.rmdirs.remove(path)
            continue
        if want is None:
            out.removes.append(path)
        elif want.kind == "f" and want.sha is None:
            out.unrestorable.append((path, want.why or "not restorable"))
        else:
            out.writes.append((path, want))
    out.rmdirs.sort(key=lambda p: p.count("/"), reverse=True)
    out.mkdirs.sort(key=lambda item: item[0].count("/"))
    return out


def _file(entry: Entry | None) -> Entry | None:
    return None if entry is None or entry.kind == "d" else entry


class UnsafePath(Exception):
    pass


def _check_rel(rel: str) -> list[str]:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UnsafePath(f"not a path inside the workspace: {rel!r}")
    return parts


def _safe_parent(cwd: str, rel: str, *, create: bool) -> str:
    """The real folder holding ``rel``, every step a real directory (no symlink) inside ``cwd``."""
    parts = _check_rel(rel)
    here = cwd
    for name in parts[:-1]:
        here = os.path.join(here, name)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if not create:
                raise UnsafePath(f"{rel}: its folder does not exist") from None
            os.mkdir(here, 0o755)
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafePath(f"{rel}: {os.path.relpath(here, cwd)} is a symlink or a file, not a folder")
    return here


def _write(cwd: str, rel: str, entry: Entry, data: bytes | None) -> None:
    parent = _safe_parent(cwd, rel, create=True)
    final = os.path.join(parent, rel.rsplit("/", 1)[-1])
    tmp = os.path.join(parent, f".dsh-restore-{os.getpid()}.tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    if entry.kind == "l":
        os.symlink(entry.target or "", tmp)
    else:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data or b"")
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, entry.mode)
        finally:
            os.close(fd)
    try:
        os.replace(tmp, final)
    except OSError:
        os.unlink(tmp)
        raise


def apply_plan(store: CheckpointStore, cwd: str, plan: Plan) -> Outcome:
    cwd = os.path.realpath(cwd)
    out = Outcome()

    def attempt(rel: str, fn: object) -> None:
        try:
            fn()  # type: ignore[operator]
        except UnsafePath as exc:
            out.failed.append((rel, f"UNSAFE_PATH: {exc}"))
        except OSError as exc:
            out.failed.append((rel, f"{type(exc).__name__}: {exc.strerror or exc}"))

    for rel in sorted(plan.removes, key=lambda p: p.count("/"), reverse=True):
        def remove(rel: str = rel) -> None:
            final = os.path.join(_safe_parent(cwd, rel, create=False), rel.rsplit("/", 1)[-1])
            if os.path.lexists(final) and not stat.S_ISDIR(os.lstat(final).st_mode):
                os.unlink(final)  # a symlink itself, never its target
            out.removed.append(rel)
        attempt(rel, remove)
    for rel in plan.rmdirs:
        def rmdir(rel: str = rel) -> None:
            final = os.path.join(_safe_parent(cwd, rel, create=False), rel.rsplit("/", 1)[-1])
            if stat.S_ISDIR(os.lstat(final).st_mode):
                try:
                    os.rmdir(final)
                except OSError:
                    return  # not empty: something not tracked (ignored) is in it
                out.removed.append(rel)
        attempt(rel, rmdir)
    for rel, entry in plan.mkdirs:
        def mkdir(rel: str = rel, entry: Entry = entry) -> None:
            final = os.path.join(_safe_parent(cwd, rel, create=True), rel.rsplit("/", 1)[-1])
            if not os.path.lexists(final):
                os.mkdir(final, 0o700)
            if not stat.S_ISDIR(os.lstat(final).st_mode):
                raise UnsafePath(f"{rel} is not a folder")
            os.chmod(final, entry.mode)
        attempt(rel, mkdir)
    for rel, entry in plan.writes:
        data = None
        if entry.kind == "f":
            data = store.read_blob(entry.sha or "")
            if data is None:
                out.failed.append((rel, f"CHECKPOINT_BLOB_MISSING: blob {entry.sha} is missing or corrupt"))
                continue

        def write(rel: str = rel, entry: Entry = entry, data: bytes | None = data) -> None:
            _write(cwd, rel, entry, data)
            out.written.append(rel)
        attempt(rel, write)
    return out
