"""Put a workspace back as a listing says: a plan, then its application — all of it or none.

A **plan** compares the target listing (the checkpoint) with the workspace as it is (``current``:
the listing of a fresh scan, plus what :mod:`.probe` found on disk that the scan does not cover —
ignored files, folders holding them). Every path the rewind would write, delete or replace whose
state differs from the state the agent left it in (``last``: the workspace at the end of the last
turn, or after the last whole rewind) was changed outside the agent — by hand, by a per-file
Revert, by anything — and is a **conflict**, left alone unless ``force``; what lies below a
conflicting path is left alone with it. Paths the user **kept** (``keep``) are left alone too.

**Applying** goes through :class:`~.fsat.Tree` (directory descriptors, ``O_NOFOLLOW``, nothing
written outside the workspace). What can be known beforehand fails its path only and is reported
(``CHECKPOINT_UNSAFE_PATH``: a path outside the workspace or excluded; ``CHECKPOINT_BLOB_MISSING``;
``CHECKPOINT_UNRESTORABLE``: over a size cap when it was taken); anything that fails while applying
(a folder swapped for a symlink, a full disk, a permission) undoes what the rewind had already
done (``rolledBack``), from the blobs of the workspace taken just before it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .entry import Entry, Listing, failure, io_error
from .exclude import is_excluded
from .fsat import Tree, UnsafePath, check_rel
from .store import CheckpointStore

__all__ = ["Outcome", "Plan", "UnsafePath", "apply_plan", "plan_restore"]


@dataclass
class Plan:
    writes: list[tuple[str, Entry]] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    mkdirs: list[tuple[str, Entry]] = field(default_factory=list)
    rmdirs: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    unrestorable: list[tuple[str, str]] = field(default_factory=list)  # path, why (over a cap when taken)
    unsafe: list[tuple[str, str]] = field(default_factory=list)  # path, why (outside the workspace, excluded)
    kept: list[str] = field(default_factory=list)  # left as they are: the user kept them
    prior: Listing = field(default_factory=dict)  # the state before, of every path the plan changes

    @property
    def empty(self) -> bool:
        return not (self.writes or self.removes or self.mkdirs or self.rmdirs)


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # path, "CODE: why"
    rolled_back: bool = False


def _state(e: Entry | None) -> tuple[object, ...] | None:
    """What a conflict compares: a folder is a folder (its mode aside); a file or link whole."""
    if e is None:
        return None
    return ("d",) if e.kind == "d" else (e.kind, e.mode, e.size, e.sha, e.target, e.why)


def _under(path: str, prefixes: set[str]) -> bool:
    parts = path.split("/")
    return any("/".join(parts[:k]) in prefixes for k in range(1, len(parts)))


def plan_restore(target: Listing, current: Listing, last: Listing | None, *, only: set[str] | None = None,
                 force: bool = False, keep: frozenset[str] = frozenset(), excluded: frozenset[str] = frozenset(),
                 crowded: frozenset[str] = frozenset()) -> Plan:
    """The plan from ``current`` to ``target``; ``crowded``: folders of ``current`` that hold
    entries no listing covers (a rewind cannot replace them by a file without losing those)."""
    out = Plan()
    blocked: set[str] = set()  # conflicting paths: nothing below them is touched
    for path in sorted(set(target) | set(current)):
        if only is not None and path not in only:
            continue
        want, have = target.get(path), current.get(path)
        if want == have:
            continue
        try:
            check_rel(path)
        except UnsafePath as exc:
            out.unsafe.append((path, str(exc)))
            continue
        if is_excluded(path, excluded):
            out.unsafe.append((path, "$DSH_HOME, the store or hidden by the sandbox: never restored"))
            continue
        if _under(path, blocked):
            if want is not None or have is not None and have.kind != "d":
                out.conflicts.append(path)
            continue
        if path in keep and only is None:
            out.kept.append(path)
            continue
        retype = have is not None and want is not None and (have.kind == "d") != (want.kind == "d")
        changed = last is not None and _state(have) != _state(last.get(path))
        if (changed and not force) or (retype and have is not None and have.kind == "d" and path in crowded):
            out.conflicts.append(path)  # changed outside the agent since (or holds what no checkpoint has)
            if retype or have is not None and have.kind == "d":
                blocked.add(path)
            continue
        out.prior[path] = have  # type: ignore[assignment]
        if want is not None and want.kind == "d":
            if have is not None and have.kind != "d":
                out.removes.append(path)
            out.mkdirs.append((path, want))
        elif have is not None and have.kind == "d":
            out.rmdirs.append(path)
            if want is not None:
                out.writes.append((path, want))
        elif want is None:
            out.removes.append(path)
        elif want.kind == "f" and want.sha is None:
            out.unrestorable.append((path, want.why or "not restorable"))
            out.prior.pop(path, None)
        else:
            out.writes.append((path, want))
    out.rmdirs.sort(key=lambda p: p.count("/"), reverse=True)
    out.mkdirs.sort(key=lambda item: item[0].count("/"))
    return out


class _Apply:
    """One application of a plan, with the journal that undoes it."""

    def __init__(self, store: CheckpointStore, tree: Tree, plan: Plan) -> None:
        self.store, self.tree, self.plan = store, tree, plan
        self.done: list[tuple[str, str, Entry | None]] = []  # (op, path, prior state)
        self.out = Outcome()
        self.at = ""  # the path of the step under way (named when it fails)

    def _put(self, rel: str, entry: Entry) -> None:
        data = None
        if entry.kind == "f":
            data = self.store.read_blob(entry.sha or "")
            if data is None:
                raise LookupError(f"blob {entry.sha} of {rel} is missing or corrupt")
        self.tree.write(rel, entry.kind, data, entry.mode, entry.target)

    def run(self) -> None:
        p, tree = self.plan, self.tree
        for rel in sorted(p.removes, key=lambda x: x.count("/"), reverse=True):
            self.at = rel
            if tree.unlink(rel):
                self.done.append(("removed", rel, p.prior.get(rel)))
        for rel in p.rmdirs:
            self.at = rel
            if tree.rmdir(rel):
                self.done.append(("rmdir", rel, p.prior.get(rel)))
        for rel, entry in p.mkdirs:
            self.at = rel
            before = tree.lstat(rel)
            created = tree.mkdir(rel, entry.mode)
            self.done.append(("mkdir" if created else "chmod", rel,
                              None if created or before is None else Entry("d", before.st_mode & 0o7777)))
        for rel, entry in p.writes:
            self.at = rel
            self._put(rel, entry)
            self.done.append(("wrote", rel, p.prior.get(rel)))

    def undo(self) -> list[tuple[str, str]]:
        """Put back, newest first, what :meth:`run` did; the paths that could not be."""
        lost: list[tuple[str, str]] = []
        for op, rel, prior in reversed(self.done):
            try:
                if op in ("wrote", "removed"):
                    if prior is None or prior.kind == "d":
                        self.tree.unlink(rel)
                    elif prior.kind == "f" and prior.sha is None:
                        lost.append(failure(rel, "it was over a size cap: not kept", code="CHECKPOINT_UNRESTORABLE"))
                    else:
                        self._put(rel, prior)
                elif op == "mkdir":
                    self.tree.rmdir(rel)
                elif op == "rmdir" or op == "chmod":
                    self.tree.mkdir(rel, prior.mode if prior is not None else 0o755)
            except (OSError, UnsafePath, LookupError) as exc:
                lost.append(failure(rel, f"could not be put back ({exc})", code="CHECKPOINT_ROLLED_BACK"))
        return lost


def planned_failures(plan: Plan) -> list[tuple[str, str]]:
    """The paths a plan knows it cannot restore, each with its code."""
    return [*(failure(p, why, code="CHECKPOINT_UNSAFE_PATH") for p, why in plan.unsafe),
            *(failure(p, f"{why} when it was taken", code="CHECKPOINT_UNRESTORABLE") for p, why in plan.unrestorable)]


def _preflight(store: CheckpointStore, plan: Plan) -> list[tuple[str, str]]:
    """Drop from ``plan`` the writes whose blob is missing or corrupt (known before anything runs)."""
    failed: list[tuple[str, str]] = []
    kept: list[tuple[str, Entry]] = []
    for rel, entry in plan.writes:
        if entry.kind == "f" and store.read_blob(entry.sha or "") is None:
            failed.append(failure(rel, f"blob {entry.sha} is missing or corrupt", code="CHECKPOINT_BLOB_MISSING"))
        else:
            kept.append((rel, entry))
    plan.writes = kept
    return failed


def apply_plan(store: CheckpointStore, cwd: str, plan: Plan) -> Outcome:
    """Apply ``plan`` to the workspace ``cwd``: every change, or — when one fails — none."""
    failed = [*planned_failures(plan), *_preflight(store, plan)]
    try:
        tree = Tree(os.path.realpath(cwd))
    except UnsafePath as exc:
        return Outcome(failed=[*failed, failure("", f"the workspace: {exc}", code="CHECKPOINT_UNSAFE_PATH")])
    except OSError as exc:
        return Outcome(failed=[*failed, failure("", f"the workspace: {exc.strerror}", code=io_error(exc, "").code)])
    with tree:
        job = _Apply(store, tree, plan)
        try:
            job.run()
        except (OSError, UnsafePath, LookupError) as exc:
            rel = job.at
            code = ("CHECKPOINT_UNSAFE_PATH" if isinstance(exc, UnsafePath) else "CHECKPOINT_BLOB_MISSING"
                    if isinstance(exc, LookupError) else io_error(exc, "restore").code)
            why = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
            lost = job.undo()
            return Outcome(failed=[*failed, failure(rel, f"{why}; nothing was changed (rolled back)", code=code), *lost],
                           rolled_back=True)
    out = job.out
    out.failed = failed
    out.written = [rel for op, rel, _ in job.done if op == "wrote"]
    out.removed = [rel for op, rel, _ in job.done if op in ("removed", "rmdir")]
    return out

