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

Notebooks are :class:`~.ipynb.Notebook` TypedDicts, validated where they enter (a file or a page's
answer that is not nbformat 4 is ``BAD_NOTEBOOK_FILE``).
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from jupyter_core.utils import ensure_async
from typing_extensions import TypedDict

from ..errors import DshError
from ..wire.base import dump
from ..wire.external import CellProvenance
from ..wire.external_pages import CellInsert, CellReplace
from . import clean_path
from .ipynb import Cell, CellType, Metadata, Notebook, as_notebook, cell_json, text_of
from .pages import LabPages

R = TypeVar("R")


class KernelModel(TypedDict, total=False):
    """A session's kernel as Jupyter Server's session manager describes it."""

    id: str
    name: str
    last_activity: str
    execution_state: str
    connections: int


class JupyterSession(TypedDict, total=False):
    """One of Jupyter Server's sessions (what JupyterLab opened a notebook with)."""

    id: str
    path: str
    name: str
    type: str
    kernel: KernelModel | None


class Notebooks:
    """Jupyter's sessions and contents, for the tools."""

    def __init__(self, serverapp: Any, pages: LabPages | None = None) -> None:
        self.app = serverapp
        self.pages = pages if pages is not None else LabPages()
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def contents(self) -> Any:
        return self.app.contents_manager

    async def sessions(self) -> list[JupyterSession]:
        found: list[JupyterSession] = await ensure_async(self.app.session_manager.list_sessions())
        return [s for s in found
                if s.get("type") == "notebook" or str(s.get("path", "")).endswith(".ipynb")]  # a Jupyter session, not wire routing

    async def kernel_of(self, path: str) -> tuple[str, str]:
        """``(path, kernel id)`` of an open notebook; ``NO_KERNEL`` / ``UNKNOWN_NOTEBOOK``."""
        path = clean_path(path)
        for s in await self.sessions():
            kernel = s.get("kernel")
            if clean_path(str(s.get("path", "x"))) == path and kernel:
                return path, str(kernel["id"])
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

    async def read(self, path: str) -> tuple[Notebook, str | None]:
        """The notebook file and its content hash."""
        path = clean_path(path)
        model = await ensure_async(self.contents.get(path, content=True, type="notebook", require_hash=True))
        return as_notebook(model["content"], path), model.get("hash")

    async def view(self, path: str) -> tuple[Notebook, str]:
        """The notebook as the person sees it — the open page's, unsaved changes included — or
        its file; and a phrase saying which."""
        path = clean_path(path)
        page = self.pages.showing(path)
        if page is not None:
            live = await page.read(path)
            unsaved = "with unsaved changes" if live.dirty else "saved"
            return as_notebook(live.notebook, f"{path} as open in JupyterLab"), f"as open in JupyterLab, {unsaved}"
        nb, digest = await self.read(path)
        return nb, f"as last saved; hash {digest}"

    async def settle(self, path: str) -> None:
        """Before a write: the open page saves the person's unsaved changes (when its autosave is
        on), so the checkpoint before the write holds them and ``%dsh undo`` keeps them."""
        page = self.pages.showing(clean_path(path))
        if page is not None:
            await page.save(clean_path(path))

    async def current_hash(self, path: str) -> str | None:
        model = await ensure_async(self.contents.get(path, content=False, type="notebook", require_hash=True))
        digest: str | None = model.get("hash")
        return digest

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
    async def change(self, path: str, edit: Callable[[Notebook], R]) -> tuple[R, str]:
        """Read, ``edit(notebook)`` (changes it in place; returns what the tool reports),
        compare-and-swap save — in the open page, or the file. Also returns where it was made."""
        path = clean_path(path)
        lock = self._locks.setdefault(path, asyncio.Lock())
        async with lock:
            page = self.pages.showing(path)
            if page is not None:
                live = await page.read(path)
                nb = as_notebook(live.notebook, f"{path} as open in JupyterLab")
                was = copy.deepcopy(nb)
                outcome = edit(nb)
                done = await page.apply(path, cell_ops(was, nb))
                saved = "saved" if done.saved else "not saved yet: the person has unsaved changes in it"
                return outcome, f"in the notebook open in JupyterLab ({saved})"
            nb, before = await self.read(path)
            outcome = edit(nb)
            if before is not None and await self.current_hash(path) != before:
                raise DshError(f"{path} changed on disk while this edit was made (someone saved it): nothing was "
                               "written; read it again and retry", code="EDIT_CONFLICT")
            await ensure_async(self.contents.save({"type": "notebook", "format": "json", "content": nb}, path))
            return outcome, "in the notebook file (no JupyterLab page has it open)"


def cell_ops(was: Notebook, now: Notebook) -> list[CellInsert | CellReplace]:
    """What changed from ``was`` to ``now``, cell by id, as the page applies it: ``insert`` (after
    the cell with id ``after``, or first) and ``replace`` (the cell whose source is still
    ``expect``). The tools never delete or move a cell (and address cells by id only)."""
    before = {c.get("id"): c for c in was["cells"]}
    ops: list[CellInsert | CellReplace] = []
    previous: str | None = None
    for cell in now["cells"]:
        cell_id = cell.get("id")
        old = before.get(cell_id)
        if old is None:
            ops.append(CellInsert(after=previous, cell=cell_json(cell)))
        elif old != cell and cell_id is not None:
            ops.append(CellReplace(id=cell_id, cell=cell_json(cell), expect=text_of(old["source"])))
        previous = cell_id
    return ops


def find_cell(nb: Notebook, cell_id: str) -> int:
    """The index of the cell whose nbformat id is ``cell_id``; ``UNKNOWN_CELL`` otherwise."""
    for i, cell in enumerate(nb["cells"]):
        if cell.get("id") == cell_id:
            return i
    ids = [c["id"] for c in nb["cells"] if c.get("id")]
    shown = ", ".join(ids[:20]) + (" …" if len(ids) > 20 else "")
    raise DshError(f"no cell with id {cell_id!r} in the notebook (its cells: {shown or 'none'}); cells are addressed "
                   "by id only (read_notebook shows them)", code="UNKNOWN_CELL")


def new_cell(cell_type: CellType, source: str, meta: Metadata, cell_id: str | None = None) -> Cell:
    """A cell of ``cell_type`` (a code cell without outputs), with a new id unless ``cell_id``."""
    ident = cell_id or uuid.uuid4().hex[:8]
    if cell_type == "code":
        return {"id": ident, "cell_type": "code", "metadata": meta, "source": source, "outputs": [],
                "execution_count": None}
    if cell_type == "markdown":
        return {"id": ident, "cell_type": "markdown", "metadata": meta, "source": source}
    return {"id": ident, "cell_type": "raw", "metadata": meta, "source": source}


def set_provenance(cell: Cell, prov: CellProvenance) -> None:
    """``metadata.dsh.provenance`` of ``cell`` set to ``prov`` (the rest of ``metadata.dsh`` kept)."""
    meta = cell["metadata"]
    dsh = meta.get("dsh")
    meta["dsh"] = {**(dsh if isinstance(dsh, dict) else {}), "provenance": dump(prov)}
