"""Differences between two listings: the turn's file changes, and unified diffs of them."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from ..wire.endpoints import FileDiff
from .store import CheckpointStore, Entry, Listing

MAX_LISTED = 200  # per kind in one event; the counts are always complete


@dataclass
class Changes:
    added: list[tuple[str, Entry]] = field(default_factory=list)
    modified: list[tuple[str, Entry, Entry]] = field(default_factory=list)  # path, before, after
    deleted: list[tuple[str, Entry]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.deleted)

    def summary(self) -> str:
        """``+2 ~1 -1 files``."""
        return f"+{len(self.added)} ~{len(self.modified)} -{len(self.deleted)} files"


def diff_listings(before: Listing, after: Listing) -> Changes:
    """Files (and symlinks) added, modified (content, mode or target) and deleted; directories
    are not listed (they follow their files)."""
    out = Changes()
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a is not None and a.kind == "d":
            a = None
        if b is not None and b.kind == "d":
            b = None
        if a == b:
            continue
        if a is None and b is not None:
            out.added.append((path, b))
        elif b is None and a is not None:
            out.deleted.append((path, a))
        elif a is not None and b is not None:
            out.modified.append((path, a, b))
    return out


def _text(store: CheckpointStore, entry: Entry | None) -> list[str] | str:
    if entry is None:
        return []
    if entry.kind == "l":
        return [f"-> {entry.target}\n"]
    if entry.sha is None:
        return f"(not restorable: {entry.why})"
    data = store.read_blob(entry.sha)
    if data is None:
        return "(blob missing or corrupt)"
    if b"\0" in data[:8192]:
        return f"(binary, {len(data)} bytes)"
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified(store: CheckpointStore, path: str, before: Entry | None, after: Entry | None) -> str:
    """One file's unified diff (``a/`` before the turn, ``b/`` after it)."""
    old, new = _text(store, before), _text(store, after)
    head = f"--- {'a/' + path if before else '/dev/null'}\n+++ {'b/' + path if after else '/dev/null'}\n"
    if isinstance(old, str) or isinstance(new, str):
        left = old if isinstance(old, str) else f"{len(''.join(old))} bytes"
        right = new if isinstance(new, str) else f"{len(''.join(new))} bytes"
        return f"{head}Binary or unavailable: {left} -> {right}\n"
    mode = ""
    if before and after and before.mode != after.mode:
        mode = f"old mode {before.mode:o}\nnew mode {after.mode:o}\n"
    body = "".join(difflib.unified_diff(old, new, f"a/{path}" if before else "/dev/null",
                                        f"b/{path}" if after else "/dev/null", n=3))
    if body and not body.endswith("\n"):
        body += "\n\\ No newline at end of file\n"
    return mode + (body or head)


def renames(ch: Changes) -> dict[str, str]:
    """Added path -> the deleted path whose content it has (one each): a rename."""
    gone: dict[str, list[str]] = {}
    for p, e in ch.deleted:
        if e.sha:
            gone.setdefault(e.sha, []).append(p)
    out: dict[str, str] = {}
    for p, e in ch.added:
        if e.sha and gone.get(e.sha):
            out[p] = gone[e.sha].pop(0)
    return out


def changes_diff(store: CheckpointStore, changes: Changes) -> str:
    """The turn's changes as one unified diff (renames as git shows them: no content)."""
    moved = renames(changes)
    parts = [f"--- a/{moved[p]}\n+++ b/{p}\nrename from {moved[p]}\nrename to {p}\n" if p in moved
             else unified(store, p, None, e) for p, e in changes.added]
    parts += [unified(store, p, a, b) for p, a, b in changes.modified]
    gone = set(moved.values())
    parts += [unified(store, p, e, None) for p, e in changes.deleted if p not in gone]
    return "".join(parts)


DIFF_MAX_BYTES = 512 * 1024  # a side larger than this is "too-large" in a file diff (the inspector's)


def _side(store: CheckpointStore, entry: Entry | None) -> tuple[str, list[str] | str]:
    """(kind, lines or the reason in words) of one side of a file diff."""
    if entry is None:
        return "text", []
    if entry.kind == "l":
        return "text", [f"-> {entry.target}\n"]
    if entry.sha is None:
        return "unavailable", f"not restorable ({entry.why})"
    if entry.size > DIFF_MAX_BYTES:
        return "too-large", f"{entry.size} bytes (over {DIFF_MAX_BYTES // 1024} KiB: no diff shown)"
    data = store.read_blob(entry.sha)
    if data is None:
        return "unavailable", "its snapshot blob is missing or corrupt"
    if b"\0" in data[:8192]:
        return "binary", f"binary, {len(data)} bytes"
    return "text", data.decode("utf-8", errors="replace").splitlines(keepends=True)


def file_diff(store: CheckpointStore, path: str, before: Entry | None, after: Entry | None,
              renamed_from: str | None = None) -> FileDiff:
    """One file's diff for the inspector (a typed :class:`FileDiff`): text with its ``+`` / ``-``
    counts, or why there is none (binary, too large, unavailable, content unchanged)."""
    (ka, old), (kb, new) = _side(store, before), _side(store, after)
    for kind in ("unavailable", "too-large", "binary"):
        if kind in (ka, kb):
            note = "; ".join(f"{side}: {why}" for side, k, why in (("before", ka, old), ("after", kb, new))
                             if isinstance(why, str))
            return FileDiff(path=path, kind=kind, note=note, renamed_from=renamed_from)  # type: ignore[arg-type]
    assert isinstance(old, list) and isinstance(new, list)
    src = renamed_from or path
    lines = list(difflib.unified_diff(old, new, f"a/{src}" if before else "/dev/null",
                                      f"b/{path}" if after else "/dev/null", n=3))
    if not lines:
        why = f"renamed from {renamed_from}, content unchanged" if renamed_from else "content unchanged"
        if before and after and before.mode != after.mode:
            why += f" (mode {before.mode:o} -> {after.mode:o})"
        return FileDiff(path=path, kind="same", note=why, renamed_from=renamed_from)
    body = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    added = sum(1 for ln in lines[2:] if ln.startswith("+"))
    removed = sum(1 for ln in lines[2:] if ln.startswith("-"))
    return FileDiff(path=path, kind="text", text=body, added=added, removed=removed, renamed_from=renamed_from)


def file_diffs(store: CheckpointStore, changes: Changes, paths: set[str] | None = None) -> list[FileDiff]:
    """Every changed file's diff (or those of ``paths``), renames as one diff of old against new."""
    moved = renames(changes)
    gone = set(moved.values())
    out = [file_diff(store, p, dict(changes.deleted).get(moved[p]), e, moved[p]) if p in moved
           else file_diff(store, p, None, e) for p, e in changes.added]
    out += [file_diff(store, p, a, b) for p, a, b in changes.modified]
    out += [file_diff(store, p, e, None) for p, e in changes.deleted if p not in gone]
    return [d for d in out if paths is None or d.path in paths or d.renamed_from in paths]
