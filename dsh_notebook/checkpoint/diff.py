"""Differences between two listings: the turn's file changes, and unified diffs of them."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

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
