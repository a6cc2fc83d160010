"""What a rewind must know about the disk that a checkpoint's scan does not say.

A scan lists what the ignore rules and the exclusions let it see. A rewind writes the paths of an
older listing, and some of them may be ignored *now* (the turn added them to ``.gitignore``) or
lie in a folder the scan skips: what sits there on disk is the user's, and overwriting it would
lose it with no copy anywhere (issue 35 finding 7). :func:`probe` looks at each path the target
has and the scan does not, through the workspace's descriptors (:class:`~.fsat.Tree`), and keeps
what it finds in the store (so a rollback can put it back); and it names the folders the rewind
would replace by a file that hold entries no listing covers (``crowded``).
"""

from __future__ import annotations

import os
import stat

from .entry import Entry, Listing
from .exclude import is_excluded
from .fsat import Tree, UnsafePath, check_rel
from .ignore import DEFAULT_MAX_FILE
from .store import CheckpointStore


def entry_at(store: CheckpointStore, tree: Tree, rel: str, max_file: int = DEFAULT_MAX_FILE) -> Entry | None:
    """The disk's entry at ``rel`` (a file's content kept in the store), ``None`` when nothing is there."""
    st = tree.lstat(rel)
    if st is None:
        return None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return Entry("d", mode & 0o7777)
    if stat.S_ISLNK(mode):
        fd, name = tree.parent(rel)
        return Entry("l", target=os.readlink(name, dir_fd=fd))
    if not stat.S_ISREG(mode):
        return Entry("f", mode & 0o7777, 0, why="special")
    data = tree.read(rel, max_file)
    if data is None:
        return Entry("f", mode & 0o7777, st.st_size, why="over DSH_CHECKPOINT_MAX_FILE" if st.st_size > max_file
                     else "unreadable")
    sha, _ = store.put_blob(data)
    return Entry("f", mode & 0o7777, len(data), sha)


def _holds_unlisted(tree: Tree, rel: str, current: Listing, budget: list[int]) -> bool:
    """The folder ``rel`` holds, at any depth, an entry ``current`` does not list."""
    try:
        names = tree.names(rel)
    except (OSError, UnsafePath):
        return True
    for name in names:
        budget[0] -= 1
        sub = f"{rel}/{name}"
        if sub not in current or budget[0] < 0:
            return True
        if current[sub].kind == "d" and _holds_unlisted(tree, sub, current, budget):
            return True
    return False


def probe(store: CheckpointStore, tree: Tree, target: Listing, current: Listing,
          excluded: frozenset[str]) -> tuple[Listing, frozenset[str]]:
    """(entries on disk at target paths the scan did not list, folders holding unlisted entries
    that the target wants to be files)."""
    extra: Listing = {}
    for rel in sorted(target.keys() - current.keys()):
        try:
            check_rel(rel)
        except UnsafePath:
            continue
        if is_excluded(rel, excluded):
            continue
        try:
            found = entry_at(store, tree, rel)
        except UnsafePath:
            continue  # below a symlink or a file: the plan replaces that first, or fails safely
        if found is not None:
            extra[rel] = found
    crowded: set[str] = set()
    for rel, want in target.items():
        have = current.get(rel) or extra.get(rel)
        if want.kind != "d" and have is not None and have.kind == "d":
            if _holds_unlisted(tree, rel, current, [100_000]):
                crowded.add(rel)
    return extra, frozenset(crowded)
