"""The JupyterLab pages of this server, as the external agents' tools reach them (issue 41).

A page with this package's JupyterLab extension (``labextension/``, installed with the wheel)
holds a WebSocket to ``{base_url}dsh/pages`` — authenticated and authorised by Jupyter Server as
every request is (the page's cookie and XSRF-free WebSocket handshake, same origin only; a user
who may read and write contents) — and says which notebooks it has open. Then:

- ``read_notebook``, ``insert_cell`` and ``edit_cell`` on a notebook a page has open go through
  that page: what the person sees (unsaved changes included) is read, and a change is made in the
  open notebook — the person sees the cell appear — with a compare-and-swap on its content (a cell
  the person changed since the agent read it is ``EDIT_CONFLICT``; nothing is changed);
- an external call that waits for a person shows in a banner above that notebook, whose Allow /
  Deny answer the call as the loop widget's buttons do (``session/approve``).

A notebook no page shows is read and written as its file (:mod:`.notebooks`). Requests to a page
that closes before it answers fail ``PAGE_GONE``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from pydantic import BaseModel
from tornado import web, websocket

from ..errors import DshError
from ..wire.base import to_json
from ..wire.codes import received
from ..wire.external_pages import (
    ApprovalGone,
    ApprovalShown,
    CellOp,
    PageApply,
    PageApprove,
    PageNotebook,
    PageRead,
    PageReply,
    PageSave,
    PageSaved,
    PagesOpen,
    read_from_page,
)
from . import clean_path

log = logging.getLogger(__name__)
_ids = itertools.count(1)
TIMEOUT = 60.0
"""Seconds a page has to answer (a save of a large notebook included)."""
M = TypeVar("M", bound=BaseModel)
Decision = Literal["allow", "deny"]
Answer = Callable[[Decision], Awaitable[None]]
"""How a person's answer in a banner decides the call (``session/approve``)."""


class LabPage:
    """One connected page: the notebooks it has open, the requests it has not answered yet."""

    def __init__(self, send: Callable[[str], object], user: str) -> None:
        self._send = send
        self.user = user
        self.open: set[str] = set()
        self.waiting: dict[int, asyncio.Future[PageReply]] = {}
        self.closed = False

    def send(self, message: PageRead | PageSave | PageApply | ApprovalShown | ApprovalGone) -> None:
        if self.closed:
            return
        try:
            self._send(to_json(message))
        except websocket.WebSocketClosedError:  # gone without its close seen yet
            self.close()

    async def read(self, path: str) -> PageNotebook:
        """The open notebook as the person sees it (unsaved changes included)."""
        return await self._request(PageRead(id=next(_ids), path=path), PageNotebook)

    async def save(self, path: str) -> PageSaved:
        """The person's unsaved changes saved (when the page's autosave is on)."""
        return await self._request(PageSave(id=next(_ids), path=path), PageSaved)

    async def apply(self, path: str, ops: Sequence[CellOp]) -> PageSaved:
        """``ops`` made in the open notebook, all or none."""
        return await self._request(PageApply(id=next(_ids), path=path, ops=tuple(ops)), PageSaved)

    async def _request(self, ask: PageRead | PageSave | PageApply, result: type[M]) -> M:
        """Ask the page; its value as ``result``, or its coded error raised as :class:`DshError`."""
        if self.closed:
            raise DshError("the JupyterLab page that showed the notebook closed", code="PAGE_GONE")
        ident, path = ask.id, ask.path
        fut: asyncio.Future[PageReply] = asyncio.get_running_loop().create_future()
        self.waiting[ident] = fut
        try:
            self.send(ask)
            if self.closed:
                raise DshError("the JupyterLab page that showed the notebook closed", code="PAGE_GONE")
            reply = await asyncio.wait_for(fut, TIMEOUT)
        except asyncio.TimeoutError:
            raise DshError(f"the JupyterLab page showing {path} did not answer in {TIMEOUT:.0f} s; nothing is known "
                           "to have changed — read the notebook again", code="PAGE_GONE") from None
        finally:
            self.waiting.pop(ident, None)
        if not reply.ok:
            error = reply.error
            raise DshError(error.message if error else "the page refused", code=received(error.code if error else "PAGE_GONE"))
        if not isinstance(reply.value, result):
            raise DshError(f"the JupyterLab page answered {ask.kind} with something else than {result.__name__} (a page of "
                           "another version? reload it)", code="BAD_ENVELOPE")
        return reply.value

    def answered(self, message: PageReply) -> None:
        fut = self.waiting.get(message.id)
        if fut is not None and not fut.done():
            fut.set_result(message)

    def close(self) -> None:
        self.closed = True
        for fut in self.waiting.values():
            if not fut.done():
                fut.set_exception(DshError("the JupyterLab page closed before it answered: read the notebook to see "
                                           "whether the change is there", code="PAGE_GONE"))
                fut.exception()


class LabPages:
    """Every connected page, and the external calls waiting for a person."""

    def __init__(self) -> None:
        self.pages: list[LabPage] = []
        self.approvals: dict[str, ApprovalShown] = {}  # call id → the banner's message
        self._answer: dict[str, Answer] = {}  # call id → how a person's answer decides it

    def showing(self, path: str) -> LabPage | None:
        """The page that has ``path`` open (the one that said so last), or ``None``."""
        for page in reversed(self.pages):
            if path in page.open and not page.closed:
                return page
        return None

    def add(self, page: LabPage) -> None:
        self.pages.append(page)
        for message in self.approvals.values():
            if message.path in page.open:
                page.send(message)

    def remove(self, page: LabPage) -> None:
        page.close()
        if page in self.pages:
            self.pages.remove(page)

    def opened(self, page: LabPage, paths: list[str]) -> None:
        """The page's open notebooks; the banners of the new ones are shown."""
        new = set()
        for p in paths:
            try:
                new.add(clean_path(p))
            except DshError:
                continue
        added, page.open = new - page.open, new
        for message in self.approvals.values():
            if message.path in added:
                page.send(message)

    # -- approvals -----------------------------------------------------------------------------
    def asking(self, shown: ApprovalShown, answer: Answer) -> None:
        """An external call waits for a person: a banner on the pages showing its notebook."""
        if shown.call_id in self.approvals:
            return
        self.approvals[shown.call_id] = shown
        self._answer[shown.call_id] = answer
        for page in self.pages:
            if shown.path in page.open:
                page.send(shown)

    def settled(self, call_id: str) -> None:
        """The call was decided (here, in the widget, by ``%dsh stop``…): its banners go."""
        if self.approvals.pop(call_id, None) is None:
            return
        self._answer.pop(call_id, None)
        for page in self.pages:
            page.send(ApprovalGone(call_id=call_id))

    async def answer(self, call_id: str, decision: Decision) -> None:
        answer = self._answer.get(call_id)
        if answer is None:
            return
        try:
            await answer(decision)
        except DshError as exc:  # decided meanwhile: the banner goes when the call says so
            log.info("answering external call %s from a page: %s", call_id, exc)


class PagesHandler(WebSocketMixin, JupyterHandler, websocket.WebSocketHandler):  # type: ignore[misc]
    """``{base_url}dsh/pages``: one JupyterLab page's socket."""

    auth_resource = "contents"

    def initialize(self, pages: LabPages) -> None:
        self.pages = pages
        self.page: LabPage | None = None

    def check_origin(self, origin: str | None = None) -> bool:
        """Same origin only (Jupyter lets a token-authenticated socket skip its own check)."""
        origin = origin or self.request.headers.get("Origin")
        if origin is None:
            return True
        parts = urlsplit(origin)
        return f"{parts.scheme}://{parts.netloc}".lower() == f"{self.request.protocol}://{self.request.host}".lower()

    async def get(self, *args: Any, **kwargs: Any) -> None:
        user = self.current_user
        if user is None:
            raise web.HTTPError(403)
        for action in ("read", "write"):
            if not await ensure_async(self.authorizer.is_authorized(self, user, action, "contents")):
                raise web.HTTPError(403)
        res = super().get(*args, **kwargs)
        if res is not None:
            await res

    def open(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        super().open(*args, **kwargs)
        self.page = LabPage(self.write_message, getattr(self.current_user, "username", "?"))
        self.pages.add(self.page)

    def on_message(self, message: str | bytes) -> None:
        if self.page is None:
            return
        data = read_from_page(message)
        if isinstance(data, PagesOpen):
            self.pages.opened(self.page, list(data.paths))
        elif isinstance(data, PageReply):
            self.page.answered(data)
        elif isinstance(data, PageApprove):
            task = asyncio.ensure_future(self.pages.answer(data.call_id, data.decision))
            task.add_done_callback(lambda t: t.exception())

    def on_close(self) -> None:
        if self.ping_callback is not None:
            self.ping_callback.stop()
        if self.page is not None:
            self.pages.remove(self.page)
        super().on_close()
