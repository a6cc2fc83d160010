"""Notebook variables a turn changes, kept so a rewind can put them back (issue 26, item 2).

Before each ``python`` call the names its code may rebind or delete (assignments, ``del``,
imports, ``def`` / ``class``, ``global`` declarations — read from the code's AST) are kept once
per turn, in a format that cannot run code (:mod:`.varformats`: JSON, ``.npy`` without pickle,
Parquet) within ``DSH_CHECKPOINT_MAX_VARIABLE`` bytes (default 20 MB, checked before the value
is serialised), else recorded as not restorable with its type and why. After the call the namespace diff (``nsdiff``) adds the
names the AST could not foresee (``exec``, ``globals()[...]``) as not restorable. A rewind to
the start of turn N walks the later turns back: names added since are deleted, kept values are
put back. Plain dict work on the namespace; this module imports no IPython.

The kept values of each ended turn are also written to the checkpoint store
(``$DSH_HOME/checkpoints/variables/<session>/<turn>.json``: each value's format and bytes, base64,
0600 in 0700 folders), so ``rewind --variables`` works in a new kernel of the same session: the
keeper of a session reads them back when it is made, and a rewind deletes the turns it undid. A
file written by an earlier version is read as "not restorable": nothing of it is ever
unpickled. A rewind first reads back every value it will put back (:meth:`VariableKeeper.prepare`),
then changes the namespace (:meth:`VariableKeeper.apply`), so a value that cannot be read stops
nothing half-way. The namespace a rewind writes into is the last ``python`` call's, else the one
the notebook registered (:func:`use_namespace`).
"""

from __future__ import annotations

import ast
import base64
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..wire.events import VariableKept
from .entry import failure
from .varformats import NotKept, decode, encode

DEFAULT_MAX_VARIABLE = 20 * 1024 * 1024
_MISSING = object()
log = logging.getLogger(__name__)
_NAMESPACE: Callable[[], MutableMapping[str, Any]] | None = None


def use_namespace(getter: Callable[[], MutableMapping[str, Any]]) -> None:
    """The notebook's namespace, for a rewind in a kernel where no ``python`` call ran yet."""
    global _NAMESPACE
    _NAMESPACE = getter


@dataclass(frozen=True)
class Kept:
    existed: bool
    data: bytes | None = None
    type: str | None = None
    why: str | None = None
    format: str = "json"  # json | npy | parquet (varformats)

    @property
    def restorable(self) -> bool:
        return not self.existed or self.data is not None


@dataclass
class VariablePlan:
    """What a rewind of the variables will do, every value already read back: ``put`` names and
    values, ``drop`` names to delete, ``failed`` ``name: why`` not restorable, ``turns`` undone."""

    put: dict[str, object]
    drop: set[str]
    why: dict[str, str]  # name -> why it cannot be put back
    turns: list[int]

    @property
    def failed(self) -> list[str]:
        return [f"{n}: {w}" for n, w in sorted(self.why.items())]

    @property
    def names(self) -> list[str]:
        return sorted(set(self.put) | self.drop)


def assigned_names(code: str) -> set[str]:
    """Top-level names the code may bind or delete (function bodies only through ``global``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    out: set[str] = set()

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Global):
                out.update(child.names)
            if top:
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
                    out.add(child.id)
                elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    out.add(child.name)
                elif isinstance(child, ast.Import | ast.ImportFrom):
                    out.update((a.asname or a.name).split(".")[0] for a in child.names if a.name != "*")
                elif isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name):
                    out.add(child.target.id)
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
                                | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
            visit(child, top and not nested)

    visit(tree, True)
    return out


def _max_size() -> int:
    try:
        return int(os.environ.get("DSH_CHECKPOINT_MAX_VARIABLE", "") or DEFAULT_MAX_VARIABLE)
    except ValueError:
        return DEFAULT_MAX_VARIABLE


def keep(ns: Mapping[str, Any], name: str) -> Kept:
    value = ns.get(name, _MISSING)
    if value is _MISSING:
        return Kept(existed=False)
    kind = type(value).__name__
    try:
        fmt, data = encode(value, _max_size())
    except NotKept as exc:
        return Kept(True, None, kind, str(exc))
    except Exception as exc:  # a value whose own methods raise while being read
        return Kept(True, None, kind, f"could not be read ({type(exc).__name__})")
    return Kept(True, data, kind, format=fmt)


class VariableKeeper:
    """The kept variables of one session's turns."""

    def __init__(self, folder: Path | None = None) -> None:
        self.turns: dict[int, dict[str, Kept]] = {}
        self.changed: dict[int, dict[str, str]] = {}  # turn -> name -> added | rebound | deleted
        self.current: int | None = None
        self.namespace: MutableMapping[str, Any] | None = None
        self._lock = threading.Lock()
        self.folder = folder  # where ended turns are kept on disk (None: memory only)
        if folder is not None:
            self._load(folder)

    # -- on disk ------------------------------------------------------------------------------
    def _load(self, folder: Path) -> None:
        try:
            names = sorted(p for p in os.listdir(folder) if re.fullmatch(r"\d+\.json", p))
        except OSError:
            return
        for name in names:
            try:
                doc = json.loads((folder / name).read_bytes())
                turn = int(doc["turn"])
                self.turns[turn] = {str(n): _kept_of(doc.get("v"), k) for n, k in doc["kept"].items()}
                self.changed[turn] = {str(n): str(h) for n, h in doc["changed"].items()}
            except (OSError, ValueError, KeyError, TypeError, IndexError):
                log.warning("kept variables %s are unreadable: skipped", folder / name)

    def _save(self, turn: int) -> None:
        if self.folder is None:
            return
        from ..session.logfile import ensure_private_dir
        from .store import _write_private

        doc = {"v": 2, "turn": turn, "changed": self.changed.get(turn, {}),
               "kept": {n: [k.existed, base64.b64encode(k.data).decode() if k.data is not None else None, k.type, k.why,
                            k.format] for n, k in self.turns.get(turn, {}).items()}}
        try:
            ensure_private_dir(self.folder)
            _write_private(self.folder / f"{turn}.json", json.dumps(doc).encode())
        except Exception:
            log.exception("could not keep turn %s's variables on disk", turn)

    def _forget(self, turn: int) -> None:
        if self.folder is not None:
            try:
                (self.folder / f"{turn}.json").unlink()
            except OSError:
                pass

    def begin(self, turn: int) -> None:
        with self._lock:
            self.current = turn
            self.turns.setdefault(turn, {})
            self.changed.setdefault(turn, {})

    def before_python(self, ns: MutableMapping[str, Any], code: str) -> None:
        with self._lock:
            self.namespace = ns
            if self.current is None:
                return
            kept = self.turns[self.current]
            for name in assigned_names(code):
                if name not in kept and not name.startswith("__"):
                    kept[name] = keep(ns, name)

    def after_python(self, changes: Mapping[str, Any]) -> None:
        with self._lock:
            if self.current is None:
                return
            kept, changed = self.turns[self.current], self.changed[self.current]
            for how in ("added", "rebound", "deleted"):
                for entry in changes.get(how, ()) or ():
                    name = str(entry.get("name"))
                    changed.setdefault(name, how)
                    if name not in kept:
                        kept[name] = Kept(existed=how != "added", type=str(entry.get("type") or ""),  # a Python type name, not wire routing
                                          why=None if how == "added" else "changed by code the checkpoint could not foresee")

    def end(self, turn: int) -> list[VariableKept]:
        with self._lock:
            if self.current == turn:
                self.current = None
            kept, changed = self.turns.get(turn, {}), self.changed.get(turn, {})
            if turn in self.turns:
                self._save(turn)
            return [VariableKept(name=n, type=kept[n].type if n in kept else None, change=how,  # type: ignore[arg-type]
                                 restorable=n in kept and kept[n].restorable, why=kept[n].why if n in kept else "not kept")
                    for n, how in sorted(changed.items())]

    def plan(self, to_turn: int) -> list[str]:
        return self.prepare(to_turn).names

    def prepare(self, to_turn: int) -> VariablePlan:
        """Read back every value turns ``to_turn``… changed (the earliest turn's wins): nothing is
        changed yet, and a value that cannot be read is reported, not raised."""
        with self._lock:
            out = VariablePlan({}, set(), {}, sorted((t for t in self.turns if t >= to_turn), reverse=True))
            for turn in out.turns:
                for name, k in self.turns[turn].items():
                    if name not in self.changed.get(turn, {}):
                        continue
                    out.put.pop(name, None)
                    out.drop.discard(name)
                    out.why.pop(name, None)
                    if not k.restorable:
                        out.why[name] = k.why or "not kept"
                    elif not k.existed:
                        out.drop.add(name)
                    else:
                        try:
                            out.put[name] = decode(k.format, k.data or b"")
                        except Exception as exc:
                            out.why[name] = failure(name, f"{type(exc).__name__}: {exc}",
                                                    code="CHECKPOINT_VARIABLE_UNREADABLE")[1]
            return out

    def apply(self, plan: VariablePlan) -> list[str]:
        """Change the namespace as ``plan`` says (plain dict work: it cannot fail half-way) and
        forget the turns it undid; the names put back or deleted."""
        with self._lock:
            ns = self.namespace if self.namespace is not None else _NAMESPACE() if _NAMESPACE is not None else None
            if ns is None:
                return []
            for name in plan.drop:
                ns.pop(name, None)
            ns.update(plan.put)
            for turn in plan.turns:
                self.turns.pop(turn, None)
                self.changed.pop(turn, None)
                self._forget(turn)
            return plan.names

    def restore(self, to_turn: int) -> list[str]:
        """Put back the names turns ``to_turn``… changed, as they were at its start."""
        return self.apply(self.prepare(to_turn))


def _kept_of(version: object, raw: list[Any]) -> Kept:
    """One kept value as a file holds it; an earlier version's pickle is never read."""
    existed, data, kind, why = bool(raw[0]), raw[1], raw[2], raw[3]
    if version != 2 and data is not None:
        return Kept(existed, None, kind, "kept as a pickle by an earlier version: never read")
    fmt = str(raw[4]) if len(raw) > 4 else "json"
    return Kept(existed, base64.b64decode(data) if data is not None else None, kind, why, fmt)


_KEEPERS: dict[str, VariableKeeper] = {}


def keeper(session_id: str, root: Path | None = None) -> VariableKeeper:
    """The keeper of a session in this process (created on first use; with ``root``, the store's
    ``variables`` folder, its ended turns are kept on disk and read back)."""
    if session_id not in _KEEPERS:
        safe = re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", session_id) and session_id not in (".", "..")
        _KEEPERS[session_id] = VariableKeeper(root / session_id if root is not None and safe else None)
    return _KEEPERS[session_id]


def before_python(session_id: str | None, ns: MutableMapping[str, Any], code: str) -> None:
    """Called by the ``python`` tool on the main thread just before it runs ``code``."""
    if session_id and session_id in _KEEPERS:
        _KEEPERS[session_id].before_python(ns, code)


def after_python(session_id: str | None, changes: Mapping[str, Any]) -> None:
    if session_id and session_id in _KEEPERS:
        _KEEPERS[session_id].after_python(changes)
