"""Notebooks as the MCP server finds and writes them (issue 41): Jupyter's sessions and contents.

- A notebook's kernel is the one of its Jupyter session (what JupyterLab opened it with); a
  notebook without one is ``NO_KERNEL`` (nothing here starts a kernel), an unknown path
  ``UNKNOWN_NOTEBOOK``.
- ``insert_cell`` / ``edit_cell`` address cells by nbformat id only: an unknown id is
  ``UNKNOWN_CELL``, never a position. They write through Jupyter's contents manager with a
  compare-and-swap: the file is read with its hash, changed, and saved only if its hash is still
  the same (else ``EDIT_CONFLICT``: someone saved it meanwhile; nothing is written). An
  ``expected_source`` that no longer matches the cell is ``EDIT_CONFLICT`` too. Writes of one
  notebook are serialised in this process.
"""

from __future__ import annotations

import asyncio
import posixpath
import uuid
from typing import Any

from jupyter_core.utils import ensure_async

from ..errors import DshError


def clean_path(path: str) -> str:
    """A notebook path as Jupyter's contents API names it (relative to its root, ``/`` separated)."""
    text = str(path or "").strip().replace("\\", "/").lstrip("/")
    norm = posixpath.normpath(text) if text else ""
    if not norm or norm == "." or norm.startswith("../") or norm == "..":
        raise DshError(f"{path!r} is not a notebook path inside Jupyter's root folder", code="UNKNOWN_NOTEBOOK")
    return norm


class Notebooks:
    """Jupyter's sessions and contents, for the tools."""

    def __init__(self, serverapp: Any) -> None:
        self.app = serverapp
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def contents(self) -> Any:
        return self.app.contents_manager

    async def sessions(self) -> list[dict[str, Any]]:
        return [s for s in await ensure_async(self.app.session_manager.list_sessions())
                if s.get("type") == "notebook" or str(s.get("path", "")).endswith(".ipynb")]  # a Jupyter session, not wire routing

    async def kernel_of(self, path: str) -> tuple[str, str]:
        """``(path, kernel id)`` of an open notebook; ``NO_KERNEL`` / ``UNKNOWN_NOTEBOOK``."""
        path = clean_path(path)
        for s in await self.sessions():
            if clean_path(str(s.get("path", "x"))) == path and s.get("kernel"):
                return path, str(s["kernel"]["id"])
        if await ensure_async(self.contents.file_exists(path)):
            raise DshError(f"{path} has no running kernel: open it in JupyterLab (or start its kernel) — an external "
                           "agent's calls are recorded in the session of the notebook's kernel", code="NO_KERNEL")
        raise DshError(f"no notebook {path!r} in Jupyter's root folder (list_notebooks lists them)",
                       code="UNKNOWN_NOTEBOOK")

    def os_path(self, path: str) -> str | None:
        """The notebook's file on disk, when the contents manager keeps files."""
        getter = getattr(self.contents, "_get_os_path", None)
        try:
            return str(getter(path)) if getter is not None else None
        except Exception:
            return None

    async def read(self, path: str) -> tuple[dict[str, Any], str | None]:
        """The notebook (nbformat 4 as a dict) and its content hash."""
        model = await ensure_async(self.contents.get(clean_path(path), content=True, type="notebook", require_hash=True))
        return model["content"], model.get("hash")

    async def current_hash(self, path: str) -> str | None:
        model = await ensure_async(self.contents.get(path, content=False, type="notebook", require_hash=True))
        return model.get("hash")

    async def files(self, limit: int = 200) -> list[str]:
        """Notebook files under the root (breadth first, hidden folders skipped), at most ``limit``."""
        found: list[str] = []
        queue = [""]
        while queue and len(found) < limit:
            folder = queue.pop(0)
            try:
                model = await ensure_async(self.contents.get(folder, content=True, type="directory"))
            except Exception:
                continue
            for item in sorted(model.get("content") or [], key=lambda m: m["path"]):
                if item["name"].startswith("."):
                    continue
                if item["type"] == "notebook":  # a contents model, not wire routing
                    found.append(item["path"])
                elif item["type"] == "directory" and folder.count("/") < 3:  # a contents model, not wire routing
                    queue.append(item["path"])
        return found[:limit]

    # -- writes --------------------------------------------------------------------------------
    async def change(self, path: str, edit: Any) -> Any:
        """Read, ``edit(notebook)`` (returns what the tool reports), compare-and-swap save."""
        path = clean_path(path)
        lock = self._locks.setdefault(path, asyncio.Lock())
        async with lock:
            nb, before = await self.read(path)
            outcome = edit(nb)
            if before is not None and await self.current_hash(path) != before:
                raise DshError(f"{path} changed on disk while this edit was made (someone saved it): nothing was "
                               "written; read it again and retry", code="EDIT_CONFLICT")
            await ensure_async(self.contents.save({"type": "notebook", "format": "json", "content": nb}, path))
            return outcome


def find_cell(nb: dict[str, Any], cell_id: str) -> int:
    """The index of the cell whose nbformat id is ``cell_id``; ``UNKNOWN_CELL`` otherwise."""
    for i, cell in enumerate(nb.get("cells") or []):
        if cell.get("id") == cell_id:
            return i
    ids = [c.get("id") for c in nb.get("cells") or [] if c.get("id")]
    shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
    raise DshError(f"no cell with id {cell_id!r} in the notebook (its cells: {shown or 'none'}); cells are addressed "
                   "by id only (read_notebook shows them)", code="UNKNOWN_CELL")


def new_cell(cell_type: str, source: str, meta: dict[str, Any]) -> dict[str, Any]:
    cell: dict[str, Any] = {"id": uuid.uuid4().hex[:8], "cell_type": cell_type, "metadata": meta, "source": source}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def set_provenance(cell: dict[str, Any], prov: dict[str, Any]) -> None:
    meta = cell.setdefault("metadata", {})
    dsh = meta.get("dsh") if isinstance(meta.get("dsh"), dict) else {}
    meta["dsh"] = {**dsh, "provenance": prov}
