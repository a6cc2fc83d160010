"""Notebooks as the MCP server finds and writes them (issue 41): Jupyter's sessions and contents.

- A notebook's kernel is the one of its Jupyter session (what JupyterLab opened it with); a
  notebook without one is ``NO_KERNEL`` (nothing here starts a kernel), an unknown path
  ``UNKNOWN_NOTEBOOK``.
- ``insert_cell`` / ``edit_cell`` address cells by nbformat id only: an unknown id is
  ``UNKNOWN_CELL``, never a position. An ``expected_source`` that no longer matches the cell is
  ``EDIT_CONFLICT``. Writes of one notebook are serialised in this process.
- A notebook open in a JupyterLab page (:mod:`.pages`) is read and changed **there**: the tool's
  edit runs on what the page shows, and the page applies the difference — cells by id — to the
  open notebook only if the cells it touches are still as they were read (else ``EDIT_CONFLICT``)
  and saves it when it had no unsaved changes of the person's. The person sees the cell appear.
- Otherwise the file, through Jupyter's contents manager, with a compare-and-swap: the file is read
  with its hash, changed, and saved only if its hash is still the same (else ``EDIT_CONFLICT``:
  someone saved it meanwhile; nothing is written).
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from typing import Any

from jupyter_core.utils import ensure_async

from ..errors import DshError
from . import clean_path
from .pages import LabPages


class Notebooks:
    """Jupyter's sessions and contents, for the tools."""

    def __init__(self, serverapp: Any, pages: LabPages | None = None) -> None:
        self.app = serverapp
        self.pages = pages if pages is not None else LabPages()
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

    async def view(self, path: str) -> tuple[dict[str, Any], str]:
        """The notebook as the person sees it — the open page's, unsaved changes included — or
        its file; and a phrase saying which."""
        path = clean_path(path)
        page = self.pages.showing(path)
        if page is not None:
            live = await page.request("read", path)
            unsaved = "with unsaved changes" if live.get("dirty") else "saved"
            return dict(live["notebook"]), f"as open in JupyterLab, {unsaved}"
        nb, digest = await self.read(path)
        return nb, f"as last saved; hash {digest}"

    async def settle(self, path: str) -> None:
        """Before a write: the open page saves the person's unsaved changes (when its autosave is
        on), so the checkpoint before the write holds them and ``%dsh undo`` keeps them."""
        page = self.pages.showing(clean_path(path))
        if page is not None:
            await page.request("save", clean_path(path))

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
        """Read, ``edit(notebook)`` (returns what the tool reports, a dict), compare-and-swap save —
        in the open page, or the file. The report gains ``where``."""
        path = clean_path(path)
        lock = self._locks.setdefault(path, asyncio.Lock())
        async with lock:
            page = self.pages.showing(path)
            if page is not None:
                live = await page.request("read", path)
                nb = dict(live["notebook"])
                was = copy.deepcopy(nb)
                outcome = edit(nb)
                done = await page.request("apply", path, ops=cell_ops(was, nb))
                saved = "saved" if done.get("saved") else "not saved yet: the person has unsaved changes in it"
                return {**outcome, "where": f"in the notebook open in JupyterLab ({saved})"}
            nb, before = await self.read(path)
            outcome = edit(nb)
            if before is not None and await self.current_hash(path) != before:
                raise DshError(f"{path} changed on disk while this edit was made (someone saved it): nothing was "
                               "written; read it again and retry", code="EDIT_CONFLICT")
            await ensure_async(self.contents.save({"type": "notebook", "format": "json", "content": nb}, path))
            return {**outcome, "where": "in the notebook file (no JupyterLab page has it open)"}


def cell_ops(was: dict[str, Any], now: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed from ``was`` to ``now``, cell by id, as the page applies it: ``insert`` (after
    the cell with id ``after``, or first) and ``replace`` (the cell whose source is still
    ``expect``). The tools never delete or move a cell."""
    before = {c.get("id"): c for c in was.get("cells") or []}
    ops: list[dict[str, Any]] = []
    previous: str | None = None
    for cell in now.get("cells") or []:
        old = before.get(cell.get("id"))
        if old is None:
            ops.append({"op": "insert", "after": previous, "cell": cell})
        elif old != cell:
            source = old.get("source")
            ops.append({"op": "replace", "id": cell["id"], "cell": cell,
                        "expect": "".join(source) if isinstance(source, list) else str(source or "")})
        previous = cell.get("id")
    return ops


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
