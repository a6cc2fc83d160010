"""``session/page``: a window of a session's derived views, one page at a time (issue 38 item 1).

A widget holds a window of a session, not all of it: its follow stream carries the last
``window`` events (:class:`~dsh_notebook.wire.endpoints.FollowArgs`), and everything a panel
shows of the rest comes from the host in pages, on demand — computed where the whole log is::

    {"sessionId", "query": {"kind": "rows", "filter": {...}, "offset": 0, "limit": 100}}
      → {"kind": "rows", "total", "count", "offset", "rows": [{"event", "turn", "tool", ...}]}

One query kind per view: ``rows`` (the event list, filtered and searched: the query language of
``show --search``), ``facets`` (the values the filters offer), ``stats`` (a table of ``show
--stats``: requests, tools, turns or decisions by permission mode), ``timeline`` (turns and their request / tool bars, and the
busy spans of the time axis), ``turn`` (one turn's requests and tool calls: the waterfall),
``request-diff`` (what a frozen request adds to the one before), ``messages`` (``derive_messages``
at a seq, or a frozen request's messages) and ``export`` (the listed rows as JSONL or CSV text, a
part at a time). A page's ``count`` is the session's event count it was computed on: a client
holding an older page of a growing session asks again.

Stats rows are the figures of ``show --stats --json`` (``RequestStats``, ``ToolStats``,
``TurnStats``, ``ModeDecisions`` of :mod:`dsh_notebook.analysis.stats_model`, camelCase), carried as JSON objects here
(the wire imports no session model); the front end's types of them are its trajectory model's.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, JsonValue

from .base import Frozen, Nullable
from .events import Event
from .messages import AnyMessage

MAX_PAGE = 1_000
"""The most rows (bars, items, messages) one page carries; an export part up to ``MAX_EXPORT``."""
MAX_EXPORT = 10_000

PageSize = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Offset = Annotated[int, Field(ge=0)]
SeqRef = Annotated[int, Field(ge=0)]


# --- queries -------------------------------------------------------------------------------------


class RowFilter(Frozen):
    """What the event list shows: an event ``type``, a ``turn``, a ``tool`` (the selects) and a
    query of ``show --search``'s language (``text``); all must hold."""

    type: str | None = None
    turn: int | None = None
    tool: str | None = None
    text: str = ""


class RowsQuery(Frozen):
    """The rows of the event list from ``offset``; with ``seq``, the page that holds that event
    (``offset`` then starts ``limit // 2`` rows before it). ``complete``: answer once every figure
    is in (the durations need the whole log read) rather than at once with ``partial``."""

    kind: Literal["rows"] = "rows"
    filter: RowFilter = RowFilter()
    offset: Offset = 0
    limit: PageSize = 100
    seq: SeqRef | None = None
    complete: bool = False


class FacetsQuery(Frozen):
    kind: Literal["facets"] = "facets"


StatsTable = Literal["requests", "tools", "turns", "decisions"]
"""The tables of ``show --stats`` by their ``--json`` keys (``decisions``: 'decisions by mode')."""


class StatsQuery(Frozen):
    """Rows of one table of ``show --stats`` (``offset``, ``limit``); with ``seq``, the page holding
    the row of that event (a ``decisions`` row, one per mode, has no event)."""

    kind: Literal["stats"] = "stats"
    table: StatsTable
    offset: Offset = 0
    limit: PageSize = 100
    seq: SeqRef | None = None


class TimelineQuery(Frozen):
    """Rows of the session timeline: each turn, then its request and tool bars in time order.
    With ``bar`` (the n-th bar of the session) or ``seq`` (the bar of that event), the page that
    holds it. ``axis``: also the busy spans of the whole session (what its time axis keeps)."""

    kind: Literal["timeline"] = "timeline"
    offset: Offset = 0
    limit: PageSize = 100
    bar: Annotated[int, Field(ge=0)] | None = None
    seq: SeqRef | None = None
    axis: bool = False


class TurnQuery(Frozen):
    """One turn's requests and tool calls (the waterfall): ``turn``, else the turn that holds
    ``seq``, else the last turn."""

    kind: Literal["turn"] = "turn"
    turn: int | None = None
    seq: SeqRef | None = None


class RequestDiffQuery(Frozen):
    """What the frozen request at ``seq`` (or the first one after it) adds to the one before and
    what it no longer carries: its items from ``offset`` (added first, then removed)."""

    kind: Literal["request-diff"] = "request-diff"
    seq: SeqRef
    offset: Offset = 0
    limit: PageSize = 200


class MessagesQuery(Frozen):
    """``derive_messages()`` as of ``seq`` (``request``: the messages of the frozen request at
    ``seq``), from ``offset`` — without one, the last ``limit`` (the newest)."""

    kind: Literal["messages"] = "messages"
    seq: SeqRef
    request: bool = False
    offset: Offset | None = None
    limit: PageSize = 150


class ExportQuery(Frozen):
    """The listed rows as ``jsonl`` (the events) or ``csv`` (``show --export csv``'s columns), the
    rows ``offset`` .. ``offset + limit``; ``csv`` text starts with its header at offset 0."""

    kind: Literal["export"] = "export"
    filter: RowFilter = RowFilter()
    format: Literal["jsonl", "csv"]
    offset: Offset = 0
    limit: Annotated[int, Field(ge=1, le=MAX_EXPORT)] = MAX_EXPORT


PageQuery = Annotated[
    RowsQuery | FacetsQuery | StatsQuery | TimelineQuery | TurnQuery | RequestDiffQuery | MessagesQuery | ExportQuery,
    Field(discriminator="kind"),
]


class PageArgs(Frozen):
    session_id: str
    query: PageQuery


# --- pages ---------------------------------------------------------------------------------------


class Snippet(Frozen):
    """The text of a row around the search's first hit (the client marks the hits in it)."""

    text: str


class Row(Nullable):
    """One event of the list: the event as stored, its turn (its own, else the turn it falls in),
    the tool it concerns, the span it starts or ends (``durationMs``: a request, a tool call, an
    approval wait, a step, a turn) and the events that cite it."""

    __nullable__: ClassVar[tuple[str, ...]] = ("turn", "tool", "duration_ms")
    event: Event
    turn: int | None
    tool: str | None
    duration_ms: int | None
    cited_by: tuple[int, ...] = ()
    snippet: Snippet | None = None


class RowsPage(Nullable):
    """``total`` rows pass the filter (of ``count`` events); these are rows ``offset`` ..;
    ``index``: with ``seq``, that event's row (``null``: the filter hides it); ``error``: the
    query could not be read (``BAD_QUERY: …``, no rows); ``terms``: its free-text terms (what
    the rows mark); ``partial``: the figures that need the whole log (durations, citations) are
    not in yet — ask again to get them."""

    __nullable__: ClassVar[tuple[str, ...]] = ("index",)
    kind: Literal["rows"] = "rows"
    count: int
    total: int
    offset: int
    index: int | None = None
    rows: tuple[Row, ...] = ()
    terms: tuple[str, ...] = ()
    error: str | None = None
    partial: bool = False


class Facets(Nullable):
    """What the filters offer: every event type, tool and turn of the session, sorted; and
    ``mode``, the permission mode the log last set (its last ``mode/changed``; ``null``: none, the
    workspace's default) — what the header's selector shows when a window starts after it."""

    __nullable__: ClassVar[tuple[str, ...]] = ("mode",)
    kind: Literal["facets"] = "facets"
    count: int
    types: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    turns: tuple[int, ...] = ()
    mode: str | None = None


class StatsPage(Nullable):
    """Rows ``offset`` .. of a ``show --stats`` table (``total`` rows), the session's ``totals``,
    what the requests carried (``sent``: ``show --stats``' lines), ``index`` of ``seq``'s row."""

    __nullable__: ClassVar[tuple[str, ...]] = ("index",)
    kind: Literal["stats"] = "stats"
    count: int
    table: StatsTable
    total: int
    offset: int
    index: int | None = None
    rows: tuple[dict[str, JsonValue], ...] = ()
    totals: dict[str, JsonValue] = Field(default_factory=dict)
    sent: tuple[str, ...] = ()


class TimelineRow(Frozen):
    """A turn (``turn``: its ``TurnStats``) or one of its bars (``request``: a ``RequestStats``,
    ``tool``: a ``ToolStats``; ``bar`` its index among the session's bars)."""

    kind: Literal["turn", "request", "tool"]
    stats: dict[str, JsonValue]
    bar: int | None = None


class TimelinePage(Nullable):
    """Rows ``offset`` .. of the timeline (``total`` rows, ``bars`` of them bars); ``index``: the
    row asked for by ``bar`` or ``seq``; ``busy``: with ``axis``, the session's busy spans
    ``[start, end]`` (epoch ms, merged, in order: turns and their bars) — what a time axis keeps
    when it cuts the idle gaps; ``totals``: the session's."""

    __nullable__: ClassVar[tuple[str, ...]] = ("index",)
    kind: Literal["timeline"] = "timeline"
    count: int
    total: int
    bars: int
    offset: int
    index: int | None = None
    rows: tuple[TimelineRow, ...] = ()
    busy: tuple[tuple[int, int], ...] | None = None
    totals: dict[str, JsonValue] = Field(default_factory=dict)


class Approval(Frozen):
    """Where a call's approval was asked and decided (the seqs its waterfall bar links to)."""

    call_id: str
    asked: int | None = None
    decided: int | None = None


class TurnPage(Nullable):
    """One turn's figures (``turn``: its ``TurnStats``; ``null`` when the session has no turn yet),
    its request attempts and tool calls (``RequestStats`` / ``ToolStats``) and approvals, and
    where the others are: ``turns`` in all, the ``first`` / ``previous`` / ``next`` / ``last``."""

    __nullable__: ClassVar[tuple[str, ...]] = ("turn", "first", "previous", "next", "last")
    kind: Literal["turn"] = "turn"
    count: int
    turn: dict[str, JsonValue] | None
    requests: tuple[dict[str, JsonValue], ...] = ()
    tools: tuple[dict[str, JsonValue], ...] = ()
    approvals: tuple[Approval, ...] = ()
    turns: int = 0
    first: int | None
    previous: int | None
    next: int | None
    last: int | None


AddedKind = Literal["tool result", "steering", "user prompt", "runtime context", "assistant", "system", "other"]


class DiffItem(Frozen):
    """A message the request adds (``kind`` says what it is) or no longer carries (``removed``),
    with its event (to summarise it) when the log holds one."""

    seq: int
    kind: AddedKind | Literal["removed"]
    type: str
    event: Event | None = None


class RequestDiffPage(Nullable):
    """Request ``toSeq`` against the one before (``fromSeq``; ``null``: the first request);
    ``kept`` messages it shares with it, ``added`` new ones, ``removed`` gone; ``items`` from
    ``offset`` (added first). ``toSeq`` is ``null`` when no request is frozen at or after the seq."""

    __nullable__: ClassVar[tuple[str, ...]] = ("from_seq", "to_seq")
    kind: Literal["request-diff"] = "request-diff"
    count: int
    from_seq: int | None
    to_seq: int | None
    kept: int = 0
    added: int = 0
    removed: int = 0
    offset: int = 0
    items: tuple[DiffItem, ...] = ()


class DerivedMessage(Frozen):
    seq: int
    message: Annotated[AnyMessage, Field(discriminator="role")]


class MessagesPage(Frozen):
    """Messages ``offset`` .. of the ``total`` derived as of ``seq`` (or of its frozen request)."""

    kind: Literal["messages"] = "messages"
    count: int
    seq: int
    total: int
    offset: int
    messages: tuple[DerivedMessage, ...] = ()


class ExportPage(Frozen):
    """``text``: the export of rows ``offset`` .. (``rows`` of them) of the ``total`` listed."""

    kind: Literal["export"] = "export"
    count: int
    total: int
    offset: int
    rows: int
    text: str


AnyPage = Annotated[
    RowsPage | Facets | StatsPage | TimelinePage | TurnPage | RequestDiffPage | MessagesPage | ExportPage,
    Field(discriminator="kind"),
]


class Page(Frozen):
    """``session/page``'s answer: the page of the query's kind."""

    page: AnyPage
