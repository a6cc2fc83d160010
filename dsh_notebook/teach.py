"""Small printers for the walkthrough notebooks: events, messages, requests as plain text.

Everything here reads facts that already exist (a log, a list of events, a list of messages) and
prints them compactly, truncated, so a reader without widgets learns what the widgets show:

- :func:`show` — any event, message, model or dict as indented JSON (long strings cut);
- :func:`events_table` / :func:`filter_events` — one line per event (``python -m dsh_notebook
  show`` format), filtered by type, turn or tool;
- :func:`messages_table` — derived messages, one line each, with the surface seq they came from;
- :func:`history_at` — ``derive_messages()`` of a log restored up to a seq (stage 05 "before");
- :func:`provenance` — the assistant/message → tool/call → tool/result chain of one call id;
- :func:`request_diff` — what the messages of one ``request/frozen`` add to the previous one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypedDict

from pydantic import JsonValue

from .session.history import MessageHistory
from .session.inspect import describe_event
from .session.persistence import load_log
from .session.requests import resolve_message_seqs
from .session.session import Session
from .wire.base import dump
from .wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    RequestFrozen,
    ToolCall,
    ToolResult,
)
from .wire.messages import AnyMessage, AssistantMessage, ToolMessage

__all__ = [
    "as_data",
    "events_table",
    "filter_events",
    "first",
    "history_at",
    "load_events",
    "message_line",
    "messages_table",
    "provenance",
    "request_diff",
    "show",
    "side_by_side",
]


def _cut(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"… [{len(value) - limit} more chars]"
    if isinstance(value, dict):
        return {k: _cut(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut(v, limit) for v in value]
    return value


def as_data(obj: Any) -> Any:
    """The JSON form of ``obj``: pydantic models by alias (camelCase), ``to_dict()``, or as is."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if isinstance(obj, list | tuple):
        return [as_data(o) for o in obj]
    return obj


def show(obj: Any, *, cut: int = 160, max_lines: int = 60, omit: Sequence[str] = ()) -> None:
    """Print ``obj`` as indented JSON; strings longer than ``cut`` and output past
    ``max_lines`` lines are truncated (with a marker saying how much). ``omit``: top-level
    keys left out (e.g. an assistant message's compact ``stream``)."""
    data = as_data(obj)
    if omit and isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in omit}
    text = json.dumps(_cut(data, cut), indent=2, ensure_ascii=False, default=str)
    lines = text.splitlines()
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"… [{len(lines) - max_lines} more lines]"]
    print("\n".join(lines))


def load_events(path: str | Path) -> tuple[dict[str, JsonValue], list[AnyEvent]]:
    """The header and the typed events of a saved log (``load_log``)."""
    loaded = load_log(path)
    return dump(loaded.header), list(loaded.events)


def filter_events(
    events: Iterable[AnyEvent],
    *,
    types: str | Sequence[str] | None = None,
    turn: int | None = None,
    tool: str | None = None,
) -> list[AnyEvent]:
    """Events of the given type(s) (a prefix such as ``"tool/"`` works), turn and tool name.

    ``tool`` keeps the ``tool/call`` and ``tool/result`` events of calls to that tool, and the
    assistant messages that asked for it."""
    wanted = (types,) if isinstance(types, str) else tuple(types or ())
    names: dict[str, str] = {}
    out: list[AnyEvent] = []
    current_turn: int | None = None
    for ev in events:
        if getattr(ev, "type", "") == "turn/start":
            current_turn = getattr(ev, "turn", None)
        if isinstance(ev, ToolCall):
            names[ev.call_id] = ev.name
        if wanted and not any(ev.type == w or (w.endswith("/") and ev.type.startswith(w)) for w in wanted):
            continue
        ev_turn = getattr(ev, "turn", None)
        if turn is not None and (ev_turn if ev_turn is not None else current_turn) != turn:
            continue
        if tool is not None and not _mentions_tool(ev, tool, names):
            continue
        out.append(ev)
    return out


def _mentions_tool(ev: AnyEvent, tool: str, names: dict[str, str]) -> bool:
    if isinstance(ev, ToolCall):
        return ev.name == tool
    if isinstance(ev, ToolResult):
        return names.get(ev.message.tool_call_id) == tool
    if isinstance(ev, AssistantMessageEvent):
        return any(c.name == tool for c in ev.message.tool_calls)
    return False


def events_table(events: Iterable[AnyEvent], *, limit: int = 80, **filters: Any) -> None:
    """Print one line per event (seq, time, type, key fields, ``<- sourceEventSeqs``)."""
    rows = filter_events(events, **filters) if filters else list(events)
    for ev in rows[:limit]:
        print(describe_event(ev))
    if len(rows) > limit:
        print(f"… [{len(rows) - limit} more events]")


def first(events: Iterable[AnyEvent], type_: str, **fields: Any) -> Any:
    """The first event of ``type_`` whose attributes equal ``fields`` (``LookupError`` if none)."""
    for ev in events:
        if ev.type == type_ and all(getattr(ev, k, None) == v for k, v in fields.items()):
            return ev
    raise LookupError(f"no {type_} event with {fields}")


def message_line(message: AnyMessage, *, width: int = 90) -> str:
    """``role: text`` on one line (newlines as ⏎), tool calls as ``[name · id · arguments]``,
    tool results as ``toolCallId=… (error)?``; cut to ``width`` characters."""
    raw = "".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text")
    text = " ⏎ ".join(" ".join(line.split()) for line in raw.strip().splitlines())
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = "; ".join(f"{c.name} · {c.id} · {c.arguments}" for c in message.tool_calls)
        text = f"{text} [{calls}]" if text else f"[{calls}]"
    if isinstance(message, ToolMessage):
        flag = " (error)" if message.is_error else ""
        text = f"toolCallId={message.tool_call_id}{flag} {text}"
    line = f"{message.role}: {text}"
    return line if len(line) <= width else line[: width - 1] + "…"


def messages_table(
    messages: Sequence[AnyMessage],
    seqs: Sequence[int] | None = None,
    *,
    width: int = 90,
    roles: Sequence[str] | None = None,
) -> None:
    """Print the messages one per line, with their surface seq when known; ``roles`` keeps
    only those roles (seed 000's history view: ``("user", "assistant", "tool")``)."""
    if seqs is None and isinstance(messages, MessageHistory):
        seqs = messages.seqs
    for i, m in enumerate(messages):
        if roles is not None and m.role not in roles:
            continue
        seq = f"{seqs[i]:>4}" if seqs is not None and i < len(seqs) and seqs[i] >= 0 else "   -"
        print(f"{i:>2}  seq {seq}  {message_line(m, width=width)}")


def side_by_side(
    before: Sequence[AnyMessage], after: Sequence[AnyMessage], *, width: int = 44, titles: tuple[str, str] = ("before", "after")
) -> None:
    """Print two message lists in two columns, one message per line (each cut to ``width``)."""
    left = [f"{i:>2} {message_line(m, width=width - 3)}" for i, m in enumerate(before)]
    right = [f"{i:>2} {message_line(m, width=width - 3)}" for i, m in enumerate(after)]
    print(f"{titles[0]:<{width}} | {titles[1]}")
    print(f"{'-' * width}-+-{'-' * width}")
    for k in range(max(len(left), len(right))):
        a = left[k] if k < len(left) else ""
        b = right[k] if k < len(right) else ""
        print(f"{a:<{width}} | {b}")


def history_at(events: Sequence[AnyEvent], seq: int, *, session_id: str = "s_history") -> MessageHistory:
    """``derive_messages()`` of a Session restored from ``events[0..seq]`` (inclusive)."""
    return Session.restore(session_id, list(events[: seq + 1]), mark_seed=False).derive_messages()


def provenance(events: Sequence[AnyEvent], call_id: str) -> dict[str, JsonValue]:
    """Where one call id appears: the assistant message that asked, its ``tool/call``, its
    ``tool/result`` and the seqs that result cites (``sourceEventSeqs``)."""
    out: dict[str, JsonValue] = {"callId": call_id}
    for ev in events:
        if isinstance(ev, AssistantMessageEvent) and any(c.id == call_id for c in ev.message.tool_calls):
            out.setdefault("assistant/message", ev.seq)
        elif isinstance(ev, ToolCall) and ev.call_id == call_id:
            out.setdefault("tool/call", ev.seq)
        elif isinstance(ev, ToolResult) and ev.message.tool_call_id == call_id:
            out.setdefault("tool/result", ev.seq)
            out.setdefault("sourceEventSeqs", [*(ev.source_event_seqs or ())])
            out.setdefault("isError", ev.message.is_error)
    return out


class RequestSide(TypedDict):
    seq: int
    step: int | None
    messageSeqs: list[int]


class AddedMessage(TypedDict):
    seq: int
    type: str


class RequestDiff(TypedDict):
    """``request_diff``: the two requests' message seqs, what the later one adds and drops."""

    before: RequestSide
    after: RequestSide
    added: list[AddedMessage]
    dropped: list[int]


def request_diff(events: Sequence[AnyEvent], before: int, after: int) -> RequestDiff:
    """Compare the messages of two ``request/frozen`` events (by seq): the surface seqs each
    carried, those the later one adds and those it no longer carries."""
    a = resolve_message_seqs(events, before)
    b = resolve_message_seqs(events, after)
    frozen = [events[before], events[after]]
    assert all(isinstance(f, RequestFrozen) for f in frozen)
    added = [s for s in b if s not in set(a)]
    return {
        "before": {"seq": before, "step": getattr(frozen[0], "step", None), "messageSeqs": a},
        "after": {"seq": after, "step": getattr(frozen[1], "step", None), "messageSeqs": b},
        "added": [{"seq": s, "type": events[s].type} for s in added],
        "dropped": [s for s in a if s not in set(b)],
    }
