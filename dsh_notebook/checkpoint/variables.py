"""Notebook variables a turn changes, kept so a rewind can put them back (issue 26, item 2).

Before each ``python`` call the names its code may rebind or delete (assignments, ``del``,
imports, ``def`` / ``class``, ``global`` declarations — read from the code's AST) are kept once
per turn: their value pickled within ``DSH_CHECKPOINT_MAX_VARIABLE`` bytes (default 20 MB), else
recorded as not restorable with its type. After the call the namespace diff (``nsdiff``) adds the
names the AST could not foresee (``exec``, ``globals()[...]``) as not restorable. A rewind to
the start of turn N walks the later turns back: names added since are deleted, kept values are
put back. Plain dict work on the namespace; this module imports no IPython.
"""

from __future__ import annotations

import ast
import os
import pickle
import threading
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from ..wire.events import VariableKept

DEFAULT_MAX_VARIABLE = 20 * 1024 * 1024
_MISSING = object()


@dataclass(frozen=True)
class Kept:
    existed: bool
    data: bytes | None = None
    type: str | None = None
    why: str | None = None

    @property
    def restorable(self) -> bool:
        return not self.existed or self.data is not None


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
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        return Kept(True, None, kind, f"does not pickle ({type(exc).__name__})")
    if len(data) > _max_size():
        return Kept(True, None, kind, f"over DSH_CHECKPOINT_MAX_VARIABLE ({len(data)} bytes pickled)")
    return Kept(True, data, kind)


class VariableKeeper:
    """The kept variables of one session's turns."""

    def __init__(self) -> None:
        self.turns: dict[int, dict[str, Kept]] = {}
        self.changed: dict[int, dict[str, str]] = {}  # turn -> name -> added | rebound | deleted
        self.current: int | None = None
        self.namespace: MutableMapping[str, Any] | None = None
        self._lock = threading.Lock()

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
            return [VariableKept(name=n, type=kept[n].type if n in kept else None, change=how,  # type: ignore[arg-type]
                                 restorable=n in kept and kept[n].restorable, why=kept[n].why if n in kept else "not kept")
                    for n, how in sorted(changed.items())]

    def plan(self, to_turn: int) -> list[str]:
        with self._lock:
            return sorted({n for t, kept in self.turns.items() if t >= to_turn
                           for n, k in kept.items() if k.restorable and n in self.changed.get(t, {})})

    def restore(self, to_turn: int) -> list[str]:
        """Put back the names turns ``to_turn``… changed, as they were at its start."""
        with self._lock:
            ns = self.namespace
            if ns is None:
                return []
            done: set[str] = set()
            for turn in sorted((t for t in self.turns if t >= to_turn), reverse=True):
                for name, k in self.turns[turn].items():
                    if name not in self.changed.get(turn, {}) or not k.restorable:
                        continue
                    if not k.existed:
                        ns.pop(name, None)
                    else:
                        ns[name] = pickle.loads(k.data or b"")
                    done.add(name)
                self.turns.pop(turn, None)
                self.changed.pop(turn, None)
            return sorted(done)


_KEEPERS: dict[str, VariableKeeper] = {}


def keeper(session_id: str) -> VariableKeeper:
    """The keeper of a session in this process (created on first use)."""
    if session_id not in _KEEPERS:
        _KEEPERS[session_id] = VariableKeeper()
    return _KEEPERS[session_id]


def before_python(session_id: str | None, ns: MutableMapping[str, Any], code: str) -> None:
    """Called by the ``python`` tool on the main thread just before it runs ``code``."""
    if session_id and session_id in _KEEPERS:
        _KEEPERS[session_id].before_python(ns, code)


def after_python(session_id: str | None, changes: Mapping[str, Any]) -> None:
    if session_id and session_id in _KEEPERS:
        _KEEPERS[session_id].after_python(changes)
