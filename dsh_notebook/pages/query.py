"""The event query language shared by the inspector, ``show --search`` and ``sessions --search``.

A query is terms separated by spaces; an event matches when **every** term matches:

- ``type:tool/result`` — the event type; ``type:tool`` also matches every ``tool/…`` type;
- ``name:bash`` (or ``tool:bash``) — the tool of a ``tool/call`` or of the ``tool/result`` answering it;
- ``exit:1`` — the exit code of a ``tool/result`` (``exit:!0``: any other code than 0);
- ``turn:3`` — the turn of the event; ``seq:40`` or ``seq:40..60`` — its seq (or a range);
- ``"free text"`` or a bare word — case-insensitive text of the event (a message's text, a call's
  name and arguments, else the event's JSON); a trailing ``*`` of a word is ignored here.

Values may be quoted (``name:"my tool"``). A word with a colon whose prefix is not a field above
is free text (``http://x`` stays text). A bad value (``turn:x``) is a ``BAD_QUERY`` error.
The inspector runs the same language in the browser: its TypeScript twin names this module as
its source (the front end follows the Python, never the other way round), and both are tested on
the same examples.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ErrorCode, UserError
from ..wire.base import tag

FIELDS = ("type", "name", "tool", "exit", "turn", "seq")
_TOKEN = re.compile(r'(?:(\w+):)?(?:"((?:[^"\\]|\\.)*)"?|(\S+))')


class QueryError(UserError):
    """A search query that cannot be read (``turn:x``)."""

    code: ErrorCode = "BAD_QUERY"


@dataclass
class Query:
    """A parsed query: field tests plus free-text terms (lowercase)."""

    types: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    exits: list[tuple[bool, int]] = field(default_factory=list)  # (equal?, code)
    turns: list[int] = field(default_factory=list)
    seqs: list[tuple[int, int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.types or self.names or self.exits or self.turns or self.seqs or self.texts)

    @property
    def has_fields(self) -> bool:
        return bool(self.types or self.names or self.exits or self.turns or self.seqs)


def _int(key: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise QueryError(f"{key}: needs a whole number, not {raw!r}") from None


def parse_query(text: str) -> Query:
    """Read a query; raises :class:`QueryError` (``BAD_QUERY``) on a bad field value."""
    q = Query()
    for m in _TOKEN.finditer(text):
        key, quoted, bare = m.group(1), m.group(2), m.group(3)
        value = (quoted.replace('\\"', '"') if quoted is not None else bare) or ""
        if key and key.lower() not in FIELDS:  # not a field: the whole word is text
            value, key = m.group(0).strip('"'), None
        if not key:
            word = value if quoted is not None else value.rstrip("*")
            if word:
                q.texts.append(word.lower())
            continue
        key = key.lower()
        if not value:
            raise QueryError(f"{key}: needs a value")
        if key == "type":
            q.types.append(value)
        elif key in ("name", "tool"):
            q.names.append(value.lower())
        elif key == "exit":
            neg = value.startswith("!")
            q.exits.append((not neg, _int(key, value[1:] if neg else value)))
        elif key == "turn":
            q.turns.append(_int(key, value))
        else:
            if ".." in value:
                lo, _, hi = value.partition("..")
                q.seqs.append((_int(key, lo) if lo else 0, _int(key, hi) if hi else 1 << 62))
            else:
                q.seqs.append((_int(key, value), _int(key, value)))
    return q


def event_text(ev: Mapping[str, Any]) -> str:
    """The text free-text terms are looked for in (and snippets are cut from)."""
    kind = tag(ev)
    if kind == "tool/call":
        return f"{ev.get('name', '')} {ev.get('arguments', '')}"
    message = ev.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if tag(block) == "text":
                    parts.append(str(block.get("text", "")))
                elif tag(block) == "tool-call":
                    parts.append(f"{block.get('name', '')} {block.get('arguments', '')}")
        if any(parts):
            return "\n".join(p for p in parts if p)
    rest = {k: v for k, v in ev.items() if k not in ("seq", "time")}
    return json.dumps(rest, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Hit:
    """One matching event: its index in the list, turn, tool name, exit code and snippet."""

    index: int
    event: Mapping[str, Any]
    turn: int | None
    name: str | None
    exit: int | None
    snippet: str  # plain text around the first hit
    marks: list[tuple[int, int]]  # the hits in the snippet


def annotate(events: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Mapping[str, Any], int | None, str | None]]:
    """Each event with its turn (a ``turn`` field, else the last ``turn/start``) and tool name."""
    turn: int | None = None
    names: dict[str, str] = {}
    by_seq: dict[int, str] = {}
    for ev in events:
        kind = tag(ev)
        if kind == "turn/start" and isinstance(ev.get("turn"), int):
            turn = ev["turn"]
        own = ev.get("turn")
        name: str | None = None
        if kind == "tool/call":
            name = str(ev.get("name", ""))
            names[str(ev.get("callId"))] = name
            if isinstance(ev.get("seq"), int):
                by_seq[ev["seq"]] = name
        elif str(kind).startswith("approval/") and ev.get("name"):
            name = str(ev.get("name"))
        elif kind is not None and str(kind).startswith("tool/"):
            message = ev.get("message")
            call = ev.get("callId") or (message.get("toolCallId") if isinstance(message, dict) else None)
            name = names.get(str(call)) if call else None
            for s in ev.get("sourceEventSeqs") or ():
                name = name or by_seq.get(s)
        yield ev, own if isinstance(own, int) else turn, name


def exit_code(ev: Mapping[str, Any]) -> int | None:
    meta = ev.get("meta")
    code = meta.get("exitCode") if isinstance(meta, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def matches(q: Query, ev: Mapping[str, Any], turn: int | None, name: str | None) -> bool:
    kind = tag(ev) or ""
    if any(kind != t and not kind.startswith(t.rstrip("/") + "/") for t in q.types):
        return False
    if q.names and (name is None or any(name.lower() != n for n in q.names)):
        return False
    code = exit_code(ev)
    if any(code is None or (code == c) != eq for eq, c in q.exits):
        return False
    if any(turn != t for t in q.turns):
        return False
    seq = ev.get("seq")
    if any(not isinstance(seq, int) or not lo <= seq <= hi for lo, hi in q.seqs):
        return False
    if q.texts:
        low = event_text(ev).lower()
        return all(t in low for t in q.texts)
    return True


def snippet(text: str, terms: list[str], *, width: int = 60) -> tuple[str, list[tuple[int, int]]]:
    """A one-line excerpt around the first hit and the spans ``(start, end)`` of every hit in it."""
    flat = " ".join(text.split())
    low = flat.lower()
    first = min((i for i in (low.find(t) for t in terms if t) if i >= 0), default=0)
    start = 0 if first < width // 2 else first - width // 3
    end = min(len(flat), start + width + sum(len(t) for t in terms))
    lead, tail = ("…" if start else ""), ("…" if end < len(flat) else "")
    cut = lead + flat[start:end] + tail
    return cut, _spans(cut.lower(), terms)


def marked(text: str, spans: list[tuple[int, int]], open_: str = "[", close: str = "]") -> str:
    """``text`` with every span wrapped in ``open_`` … ``close``."""
    out, at = [], 0
    for a, b in spans:
        out += [text[at:a], open_, text[a:b], close]
        at = b
    out.append(text[at:])
    return "".join(out)


def _spans(low: str, terms: list[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for t in terms:
        i = low.find(t) if t else -1
        while i >= 0:
            spans.append((i, i + len(t)))
            i = low.find(t, i + len(t))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def search_events(events: Iterable[Mapping[str, Any]], q: Query) -> list[Hit]:
    """The events matching ``q``, in order, each with a snippet."""
    hits = []
    for i, (ev, turn, name) in enumerate(annotate(events)):
        if matches(q, ev, turn, name):
            hits.append(Hit(i, ev, turn, name, exit_code(ev), *snippet(event_text(ev), q.texts)))
    return hits
