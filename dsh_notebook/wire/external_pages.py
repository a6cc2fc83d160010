"""The JupyterLab pages' socket ``{base_url}dsh/pages`` (issue 41): the server ⇄ the page.

A page with this package's JupyterLab extension (``labextension/``) says which notebooks it has
open (:class:`PagesOpen`); the server asks it to read (:class:`PageRead` → :class:`PageNotebook`),
save (:class:`PageSave` → :class:`PageSaved`) or change (:class:`PageApply`: :data:`CellOp` by
cell id → :class:`PageSaved`) one of them, each answered by a :class:`PageReply` with the ask's
``id``; and it shows or takes down the banner of an external call waiting for a person
(:class:`ApprovalShown` / :class:`ApprovalGone`), whose answer comes back as :class:`PageApprove`.

Notebooks and cells travel as nbformat v4 JSON (``notebook``, ``cell``): the server types them
with its nbformat TypedDicts (``dsh_notebook.external.ipynb``), the page with JupyterLab's own
(``@jupyterlab/nbformat``). The JupyterLab extension's TypeScript of these messages is generated
(``make types``).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field, JsonValue, TypeAdapter, ValidationError

from .base import Frozen, Nullable
from .envelopes import WireError
from .events import ExternalClient
from .external import ExternalTool

NbJson = dict[str, JsonValue]
"""An nbformat v4 notebook or cell as JSON (typed by its readers: see the module's text)."""


class CellInsert(Nullable):
    """Insert ``cell`` after the cell with id ``after`` (``null``: first)."""

    __nullable__: ClassVar[tuple[str, ...]] = ("after",)
    op: Literal["insert"] = "insert"
    after: str | None
    cell: NbJson


class CellReplace(Frozen):
    """Replace the cell with id ``id`` by ``cell``, only if its source is still ``expect``."""

    op: Literal["replace"] = "replace"
    id: str
    cell: NbJson
    expect: str


CellOp = Annotated[CellInsert | CellReplace, Field(discriminator="op")]
"""One change of an open notebook, cell by id (the tools never delete or move a cell)."""


# --- the server to the page ------------------------------------------------------------------


class PageRead(Frozen):
    """Read the open notebook ``path`` as the person sees it (unsaved changes included)."""

    kind: Literal["read"] = "read"
    id: int
    path: str


class PageSave(Frozen):
    """Save the person's unsaved changes of ``path`` (when the page's autosave is on)."""

    kind: Literal["save"] = "save"
    id: int
    path: str


class PageApply(Frozen):
    """Make ``ops`` in the open notebook ``path``, all or none (a cell changed since: ``EDIT_CONFLICT``)."""

    kind: Literal["apply"] = "apply"
    id: int
    path: str
    ops: tuple[CellOp, ...]


class ApprovalShown(Frozen):
    """An external call on ``path`` waits for a person: the banner above that notebook. ``text``:
    the code or cell source it would run or write (masked, as the session's log has it)."""

    kind: Literal["approval"] = "approval"
    call_id: str
    path: str
    tool: ExternalTool
    client: ExternalClient
    session_id: str
    text: str | None = None


class ApprovalGone(Frozen):
    """The call was decided (in the banner, the widget, by ``%dsh stop`` …): its banner goes."""

    kind: Literal["approval-gone"] = "approval-gone"
    call_id: str


PageAsk = Annotated[PageRead | PageSave | PageApply, Field(discriminator="kind")]
"""An ask the page answers with a :class:`PageReply` of the same ``id``."""
ToPage = Annotated[PageRead | PageSave | PageApply | ApprovalShown | ApprovalGone, Field(discriminator="kind")]
"""Every message the server sends a page."""


# --- the page to the server ------------------------------------------------------------------


class PagesOpen(Frozen):
    """The notebooks the page has open (paths as Jupyter's contents API names them)."""

    kind: Literal["open"] = "open"
    paths: tuple[str, ...] = Field(max_length=10_000)


class PageNotebook(Frozen):
    """The value of a :class:`PageRead`: the notebook as the page has it, and whether the person
    has unsaved changes in it."""

    notebook: NbJson
    dirty: bool


class PageSaved(Frozen):
    """The value of a :class:`PageSave` or :class:`PageApply`: saved now or not, unsaved changes left."""

    saved: bool
    dirty: bool


class PageReply(Frozen):
    """The answer to the ask ``id``: ``value`` (:class:`PageNotebook` to a read, :class:`PageSaved`
    to a save or an apply), or the coded ``error`` (``EDIT_CONFLICT``, ``PAGE_GONE`` …)."""

    kind: Literal["reply"] = "reply"
    id: int
    ok: bool
    value: PageNotebook | PageSaved | None = None
    error: WireError | None = None


class PageApprove(Frozen):
    """A person's answer in the banner of the call ``callId``."""

    kind: Literal["approve"] = "approve"
    call_id: str
    decision: Literal["allow", "deny"]


FromPage = Annotated[PagesOpen | PageReply | PageApprove, Field(discriminator="kind")]
"""Every message a page sends the server."""


FromPageAdapter: TypeAdapter[FromPage] = TypeAdapter(FromPage)


class _ReplyTo(BaseModel):
    """What a reply that does not validate still says: which ask it answers."""

    kind: Literal["reply"]
    id: int


def read_from_page(text: str | bytes) -> PagesOpen | PageReply | PageApprove | None:
    """A page's message, typed; ``None`` for anything else (ignored: a page of another version).
    A reply that does not validate answers its ask with ``BAD_ENVELOPE`` (nothing waits in vain)."""
    try:
        return FromPageAdapter.validate_json(text)
    except ValidationError as exc:
        try:
            ask = _ReplyTo.model_validate_json(text)
        except ValidationError:
            return None
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return PageReply(id=ask.id, ok=False, error=WireError(
            code="BAD_ENVELOPE", message=f"the JupyterLab page's reply is not one ({where}: {first['msg']}): a page "
                                         "of another version? reload it"))


__all__ = [
    "ApprovalGone", "ApprovalShown", "CellInsert", "CellOp", "CellReplace", "FromPage", "PageApply", "PageApprove",
    "PageAsk", "PageNotebook", "PageRead", "PageReply", "PageSave", "PageSaved", "PagesOpen", "ToPage",
    "read_from_page",
]  # fmt: skip
