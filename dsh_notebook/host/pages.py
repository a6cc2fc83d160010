"""``session/page`` (issue 38 item 1): the host's side of a widget that holds a window of a session.

A :class:`PageSource` keeps one session's :class:`~dsh_notebook.pages.indexed.SessionPages` up to
date with its log — a live session's stored lines as they are appended, or a saved log's — and
answers the pages of :mod:`dsh_notebook.wire.pages` from it. All reading, indexing and folding
runs off the host loop (one worker at a time per session); the loop only hands out the lines that
are new since the last page.

Nothing waits for the whole log when it need not: a source starts building its index as soon as
a windowed follow opens (:meth:`PageSource.prepare`), the first page of the unfiltered event list
is served from the stored lines while that runs (``partial``), and a rows page never waits for
the figures (``show --stats`` of the whole log: the durations column) unless it asks
``complete`` — the widget asks again that way to fill them in. A widget's replay of a long log
starts folding it while the browser loads the view (:func:`prebuild`): the figures first, so
Stats, the Timeline and a turn's Waterfall wait for the fold only, then the index.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..pages.indexed import CHUNK, SessionPages
from ..pages.requests import messages_page, request_diff_page
from ..pages.rows import export_page, facets_page, quick_rows, rows_page
from ..pages.stats import stats_page, timeline, timeline_page, turn_page
from ..session.saved import SavedLog
from ..session.session import Session
from ..wire.events import AnyEvent
from ..wire.pages import MessagesQuery, Page, PageQuery, RequestDiffQuery, RowsQuery

QUICK_MIN = 5_000
"""A log this long is indexed in the background; its first rows page comes from its lines."""


class PageSource:
    """One session's pages: its index kept up to date by ``lines`` (the stored lines ``start`` ..
    ``stop``), its typed events from ``models``."""

    def __init__(self, session_id: str, lines: Callable[[int, int], Sequence[str]],
                 models: Callable[[int], Iterable[AnyEvent]], *, total: Callable[[], int]) -> None:
        self.pages = SessionPages(session_id, models)
        self._lines = lines
        self._total = total
        self._indexing: asyncio.Task[None] | None = None
        self._figuring: asyncio.Task[Any] | None = None
        self._seen = 0  # lines handed to the index so far
        self._early: tuple[concurrent.futures.Future[None], concurrent.futures.Future[None]] | None = None

    def prepare(self) -> None:
        """Start indexing the log now (a windowed follow opened: pages will be asked for)."""
        self._index()
        self._figures()

    def adopt(self, pages: SessionPages, indexed: concurrent.futures.Future[None],
              figured: concurrent.futures.Future[None]) -> None:
        """Take over an index a thread is building of the same lines (:func:`prebuild`)."""
        self.pages = pages
        self._seen = self._total()
        self._early = (indexed, figured)

    async def _prebuilt(self, figures: bool = False) -> None:
        if self._early is not None:
            await asyncio.wrap_future(self._early[1 if figures else 0])

    def _index(self) -> asyncio.Task[None]:
        if self._indexing is not None and not self._indexing.done():
            return self._indexing
        start, stop = self._seen, self._total()
        self._seen = max(start, stop)

        async def run(prev: asyncio.Task[None] | None) -> None:
            await self._prebuilt()
            if prev is not None and not prev.done():
                await prev
            if stop > start:
                # the lines read off the loop (a resumed session's events are serialised on first use)
                await asyncio.to_thread(lambda: self.pages.extend(self._lines(start, stop)))

        self._indexing = asyncio.get_running_loop().create_task(run(self._indexing))
        return self._indexing

    def _figures(self) -> asyncio.Task[Any]:
        if self._figuring is not None and not self._figuring.done():
            return self._figuring
        index = self._index()

        async def run() -> Any:
            await index
            await self._prebuilt(figures=True)
            return await asyncio.to_thread(self.pages.figures)

        self._figuring = asyncio.get_running_loop().create_task(run())
        return self._figuring

    async def _sync(self) -> None:
        """Index what the log holds now (what was appended while an earlier pass ran too)."""
        for _ in range(2):
            await self._index()
            if self._seen >= self._total():
                return

    async def page(self, query: PageQuery) -> Page:
        if isinstance(query, RowsQuery) and self._quick(query):
            self.prepare()
            return Page.model_validate({"page": quick_rows(self._lines(query.offset, query.offset + query.limit),
                                                           self._total(), query)})
        if isinstance(query, (MessagesQuery, RequestDiffQuery)) and self.pages.count < self._total():
            # the history at a seq of a long log not wholly indexed (a replay's first calls, a call
            # the loop widget goes to): what comes before the seq does not change, so the index as
            # far as it has gone answers once it holds the seq — the first calls from the log's
            # first lines before that — not after the whole log is read
            self.prepare()
            if self._holds(query):
                return Page.model_validate({"page": {**await asyncio.to_thread(self._answer, query), "count": self._total()}})
            if isinstance(query, MessagesQuery) and query.seq < min(QUICK_MIN, self._total()):
                return Page.model_validate({"page": await asyncio.to_thread(self._early_messages, query)})
        if query.kind in ("stats", "timeline", "turn") and self._early is not None:
            # a prebuilt log's figures are folded before its index: these pages need nothing else
            await self._prebuilt(figures=True)
            return Page.model_validate({"page": await asyncio.to_thread(self._answer, query)})
        await self._sync()
        if query.kind in ("stats", "timeline", "turn") or (isinstance(query, RowsQuery) and query.complete):
            await self._figures()
        elif isinstance(query, RowsQuery) and not self.pages.figures_ready:
            self._figures()  # the rows go now; the durations column follows when asked again
        answer = await asyncio.to_thread(self._answer, query)
        return Page.model_validate({"page": answer})

    def _quick(self, q: RowsQuery) -> bool:
        """Rows of the unfiltered list of a long log not wholly indexed yet: from its lines (row
        ``offset`` is event ``offset``) — the first screen, a part the loop widget reads — not
        after the whole log is indexed."""
        f = q.filter
        return (self.pages.count < self._total() and not q.complete and q.seq is None
                and not (f.type or f.turn is not None or f.tool or f.text.strip()) and self._total() >= QUICK_MIN)

    def _holds(self, q: MessagesQuery | RequestDiffQuery) -> bool:
        """The index holds all the page at ``q.seq`` reads: the events up to it (a request diff:
        ``seq`` is the frozen request itself, not one that may follow it)."""
        p = self.pages
        with p.lock:
            if not 0 <= q.seq < p.count:
                return False
            return isinstance(q, MessagesQuery) or p.types[q.seq] == "request/frozen"

    def _early_messages(self, q: MessagesQuery) -> dict[str, object]:
        """``messages`` at a seq the index has not reached: folded from the lines up to it (they do
        not change: the page is the one the index would give, ``count`` the log's)."""
        head = SessionPages(self.pages.session_id, self.pages.models)
        head.extend(self._lines(0, q.seq + 1))
        return {**messages_page(head, q), "count": self._total()}

    def _answer(self, q: PageQuery) -> dict[str, Any]:
        p = self.pages
        with p.lock:
            if q.kind == "rows":
                return rows_page(p, q)
            if q.kind == "facets":
                return facets_page(p)
            if q.kind == "stats":
                return stats_page(p, q)
            if q.kind == "timeline":
                return timeline_page(p, q)
            if q.kind == "turn":
                return turn_page(p, q)
            if q.kind == "request-diff":
                return request_diff_page(p, q)
            if q.kind == "messages":
                return messages_page(p, q)
            return export_page(p, q)


def _saved_models(saved: SavedLog) -> Callable[[int], Iterator[AnyEvent]]:
    """A saved log's first ``n`` typed events, validated a part at a time as they are read (one
    call over a long log would hold the GIL for seconds, and all of them the memory)."""
    def models(n: int) -> Iterator[AnyEvent]:
        for at in range(0, n, CHUNK):
            yield from saved.events(at, min(n, at + CHUNK))
            time.sleep(0)  # the host's loop and the kernel go first

    return models


def saved_source(saved: SavedLog) -> PageSource:
    """The pages of a saved log (its lines do not change); an index :func:`prebuild` started
    is taken over."""
    lines = saved.lines
    source = PageSource(saved.session_id, lambda a, b: lines[a:b], _saved_models(saved), total=lambda: len(lines))
    with _PREBUILT_LOCK:
        early = _PREBUILT.pop(id(lines), None)
    if early is not None and early[0] is lines:
        source.adopt(early[1], early[2], early[3])
    return source


Done = concurrent.futures.Future[None]
_PREBUILT: dict[int, tuple[list[str], SessionPages, Done, Done]] = {}
_PREBUILT_LOCK = threading.Lock()


def prebuild(saved: SavedLog, *, index_first: bool = False) -> None:
    """Start folding and indexing a saved log now, on a thread of its own (a widget's replay: the
    page's figures are read while the browser loads the widget); the host's source takes it over.
    ``index_first``: the index before the figures (the loop widget: its parts, history and call
    numbers need the index; only its header's totals need the figures)."""
    if len(saved.lines) < QUICK_MIN:
        return
    pages = SessionPages(saved.session_id, _saved_models(saved))
    indexed: Done = concurrent.futures.Future()
    figured: Done = concurrent.futures.Future()

    def run() -> None:
        # the figures first (Stats, Timeline, Waterfall need only them; the first rows come from
        # the lines meanwhile), the timeline's rows, then the index (filters, search, the durations
        # column) — or the index first (index_first); each step's error is what the pages that wait
        # for it meet (a bad line: LOG_CORRUPT)
        def figures() -> None:
            pages.figures(len(saved.lines))
            figured.set_result(None)
            timeline(pages.figures())  # not under the pages' lock: a page that needs them first lays them out too

        steps = [(figures, figured), (lambda: pages.extend(saved.lines), indexed)]
        for step, done in reversed(steps) if index_first else steps:
            try:
                step()
                if not done.done():
                    done.set_result(None)
            except BaseException as exc:
                if not done.done():
                    done.set_exception(exc)

    with _PREBUILT_LOCK:
        _PREBUILT[id(saved.lines)] = (saved.lines, pages, indexed, figured)
        while len(_PREBUILT) > 4:
            _PREBUILT.pop(next(iter(_PREBUILT)))
    threading.Thread(target=run, name="dsh-pages-prebuild", daemon=True).start()


def live_source(session: Session, visible: Callable[[], int] | None = None) -> PageSource:
    """The pages of a live session: its stored lines as they are appended, its own typed events;
    ``visible``: how many of them its follow hub lets be seen (a turn/end once it is on disk)."""
    def lines(start: int, stop: int) -> list[str]:
        return [session.line(i) for i in range(start, min(stop, len(session)))]

    return PageSource(session.id, lines, lambda n: session.events[:n], total=visible or (lambda: len(session)))


class PageSources:
    """The page sources of one host or one replay: live ones by session, saved ones (the most
    recently used few: a saved log's index is large) by session and log."""

    def __init__(self, keep: int = 3) -> None:
        self.keep = keep
        self._saved: OrderedDict[tuple[str, int], PageSource] = OrderedDict()
        self._live: dict[str, tuple[Session, PageSource]] = {}

    def saved(self, saved: SavedLog) -> PageSource:
        key = (saved.session_id, id(saved.lines))
        found = self._saved.get(key)
        if found is None:
            found = self._saved[key] = saved_source(saved)
            while len(self._saved) > self.keep:
                self._saved.popitem(last=False)
        self._saved.move_to_end(key)
        return found

    def live(self, session: Session, live_ids: Callable[[], Any] | None = None,
             visible: Callable[[], int] | None = None) -> PageSource:
        """``live_ids``: the ids still live (the sources of the others are let go); ``visible``:
        how many of the session's events may be seen (its follow hub's)."""
        if live_ids is not None:
            keep = live_ids()
            for sid in [k for k in self._live if k not in keep]:
                del self._live[sid]
        entry = self._live.get(session.id)
        if entry is None or entry[0] is not session:
            entry = self._live[session.id] = (session, live_source(session, visible))
        return entry[1]
