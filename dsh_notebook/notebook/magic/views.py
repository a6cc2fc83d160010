"""Small rich-repr objects the subcommands return: sessions table, config, event listing.

Each has ``_repr_html_`` (JupyterLab, classic notebook), ``_repr_markdown_`` where it reads well,
and a plain ``__repr__`` (terminal IPython, nbclient's ``text/plain``).
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from ...client.summary import event_count, summarize_result, tool_outcome
from ...observe.search import SessionMatches
from ...wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserMessageEvent,
)
from ..cell.segments import format_arguments


def _ago(ms: int | None) -> str:
    if not ms:
        return "-"
    delta = max(0.0, time.time() - ms / 1000)
    if delta < 90:
        return f"{int(delta)}s ago"
    if delta < 5400:
        return f"{int(delta // 60)}m ago"
    if delta < 129600:
        return f"{int(delta // 3600)}h ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


class Table:
    """Rows of strings with headers, shown as an HTML table or aligned text."""

    title = ""
    headers: Sequence[str] = ()

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        self.rows = [list(r) for r in rows]

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        if not self.rows:
            return f"{self.title}: (none)"
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) for i, h in enumerate(self.headers)]
        line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()  # noqa: E731
        return "\n".join([line(self.headers), line(["-" * w for w in widths]), *map(line, self.rows)])

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<i>{html.escape(self.title)}: (none)</i>"
        head = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in self.headers)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self.rows
        )
        return f"<table class='dsh-table'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class SessionTable(Table):
    title = "sessions"
    headers = ("id", "title", "turns", "events", "last activity", "status")

    @classmethod
    def from_summaries(cls, sessions: Iterable[Any], current: str | None = None) -> SessionTable:
        rows = []
        for s in sessions:
            mark = " *" if s.session_id == current else ""
            rows.append([s.session_id + mark, s.title or "(no prompt yet)", str(s.turns), str(s.event_count),
                         _ago(s.last_activity), s.status])
        return cls(rows)


class StatsView:
    """``%dsh show --stats [ID]``: the tables of ``show --stats``; ``.stats`` the figures."""

    def __init__(self, session_id: str, stats: Any) -> None:
        self.session_id, self.stats = session_id, stats

    def __repr__(self) -> str:
        from ...analysis.stats_view import format_stats

        return f"session {self.session_id}\n{format_stats(self.stats)}".rstrip()

    def _repr_html_(self) -> str:
        return f"<pre class='dsh-stats'>{html.escape(repr(self))}</pre>"

    def to_json(self) -> dict[str, JsonValue]:
        return dict(self.stats.to_json_dict())


class SearchResults(Table):
    """``%dsh sessions --search TEXT``: one row per matching event; ``.found`` the raw result."""

    title = "matches"
    headers = ("session", "seq", "type", "snippet")

    def __init__(self, query: str, found: list[SessionMatches]) -> None:
        super().__init__([s["sessionId"], str(m["seq"]), m["type"], m["snippet"]]  # a shown column, not routing
                         for s in found for m in s["matches"])
        self.query, self.found = query, found
        self.title = f"events matching {query!r}"

    def session_ids(self) -> list[str]:
        return [s["sessionId"] for s in self.found]


@dataclass(frozen=True)
class ConfigView:
    """``%dsh config``: effective settings; the key only as set / not set."""

    items: Mapping[str, str]

    def __repr__(self) -> str:
        width = max(map(len, self.items)) + 2
        return "\n".join(f"{k.ljust(width)}{v}" for k, v in self.items.items())

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'><code>{html.escape(v)}</code></td></tr>"
                       for k, v in self.items.items())
        return f"<table class='dsh-config'>{rows}</table>"


@dataclass(frozen=True)
class McpView:
    """``%dsh mcp``: the MCP servers, their status and tools (plain text, monospace)."""

    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return f"<pre class='dsh-mcp'>{html.escape(self.text)}</pre>"


def describe_event(event: AnyEvent) -> str:
    """One readable line for an event (the fallback of ``%dsh show``)."""
    if isinstance(event, UserMessageEvent):
        text = "".join(b.text for b in event.message.content)
        who = event.message.source.kind
        return f"{who}: {summarize_result(text, width=90)}"
    if isinstance(event, AssistantMessageEvent):
        parts = []
        if event.message.text:
            parts.append(summarize_result(event.message.text, width=90))
        parts += [f"→ {c.name}({format_arguments(c.arguments, width=60)})" for c in event.message.tool_calls]
        return "assistant: " + ("; ".join(parts) or "(empty)")
    if isinstance(event, ToolCall):
        return f"{event.name} {format_arguments(event.arguments, width=80)}  [call {event.call_id}]"
    if isinstance(event, ToolResult):
        outcome = tool_outcome("", event.message.text, is_error=bool(event.message.is_error),
                               code=event.error.code if event.error else None, meta=event.meta, width=80)
        return f"{outcome}  [call {event.message.tool_call_id}]"
    if isinstance(event, TurnEnd):
        return f"turn {event.turn} {event.reason.kind}" + (f" ({event.reason.cause})" if event.reason.cause else "")
    fields = event.model_dump(mode="json", exclude={"seq", "time", "type", "source_event_seqs"}, exclude_none=True)
    return ", ".join(f"{k}={v}" for k, v in fields.items() if not isinstance(v, (dict, list)))[:120]


class EventListing(Table):
    title = "events"
    headers = ("seq", "type", "what")

    def __init__(self, session_id: str, events: Sequence[AnyEvent]) -> None:
        super().__init__([str(e.seq), e.type, describe_event(e)] for e in events)
        self.session_id = session_id
        self.events = list(events)

    def __repr__(self) -> str:
        return f"session {self.session_id} ({event_count(self.events):,} events)\n" + super().__repr__()

    def _repr_html_(self) -> str:
        return f"<b>session {html.escape(self.session_id)}</b> ({event_count(self.events):,} events)" + super()._repr_html_()
