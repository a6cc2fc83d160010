"""What one ``python`` call changed in the notebook namespace: names added, rebound, deleted.

A *snapshot* maps each public name (no leading ``_``, none of IPython's own ``In``/``Out``/
``exit``/``quit``/``get_ipython``) to the identity and type of its object; the diff of two
snapshots says which names are new, which point at a different object now, and which are gone —
each with its type and shape (:func:`~.inspection.short`, no user code runs). Objects mutated in
place keep their identity and are not reported. The tool result carries the diff in ``meta``
(durable on the ``tool/result`` event) and the model sees its one-line short form.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from .inspection import describe

HIDDEN = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
MAX_LISTED = 20

Snapshot = dict[str, tuple[int, Any]]


class NameEntry(TypedDict):
    """One changed name: its object's type and, when known, shape or length."""

    name: str
    type: str
    shape: NotRequired[list[int]]
    length: NotRequired[int]


class NamespaceDiff(TypedDict):
    added: list[NameEntry]
    rebound: list[NameEntry]
    deleted: list[NameEntry]


def snapshot(namespace: Mapping[str, Any]) -> Snapshot:
    return {name: (id(value), value) for name, value in list(namespace.items())
            if isinstance(name, str) and not name.startswith("_") and name not in HIDDEN}


def _entry(name: str, value: Any) -> NameEntry:
    info = describe(value, brief=True)
    entry: NameEntry = {"name": name, "type": info["type"]}  # a Python type name, not wire routing
    if "shape" in info:
        entry["shape"] = info["shape"]
    elif "length" in info:
        entry["length"] = info["length"]
    return entry


def diff(before: Snapshot, after: Snapshot) -> NamespaceDiff:
    """``{added, rebound, deleted}``: lists of ``{name, type, shape?|length?}`` (empty lists kept)."""
    added = [_entry(n, after[n][1]) for n in sorted(after.keys() - before.keys())]
    rebound = [_entry(n, after[n][1]) for n in sorted(after.keys() & before.keys()) if after[n][0] != before[n][0]]
    deleted = [_entry(n, before[n][1]) for n in sorted(before.keys() - after.keys())]
    return {"added": added, "rebound": rebound, "deleted": deleted}


def is_empty(changes: Mapping[str, list[Any]]) -> bool:
    return not any(changes.get(k) for k in ("added", "rebound", "deleted"))


def _label(entry: Mapping[str, Any]) -> str:
    kind = str(entry.get("type", "?")).rsplit(".", 1)[-1]  # a Python type name, not wire routing
    if entry.get("shape") is not None:
        kind += " " + "×".join(str(n) for n in entry["shape"])
    elif entry.get("length") is not None:
        kind += f"[{entry['length']}]"
    return f"{entry.get('name')} ({kind})"


def short_form(changes: NamespaceDiff | Mapping[str, list[Mapping[str, Any]]]) -> str:
    """``added df (DataFrame 3×2); rebound x (int); deleted tmp (list[3])`` — or ``no names changed``."""
    parts: list[str] = []
    for key in ("added", "rebound", "deleted"):
        raw = changes.get(key)
        entries: list[Mapping[str, Any]] = list(raw) if isinstance(raw, list) else []
        if entries:
            listed = ", ".join(_label(e) for e in entries[:MAX_LISTED])
            more = f", … {len(entries) - MAX_LISTED} more" if len(entries) > MAX_LISTED else ""
            parts.append(f"{key} {listed}{more}")
    return "; ".join(parts) or "no names changed"
