"""``request-diff`` and ``messages`` pages (:mod:`.indexed`): what a frozen request adds to the one
before it, and the model-visible messages at any seq — the twins of js/src/model/diff.ts
(``resolveMessageSeqs``, ``diffRequests``, ``classifyAdded``) and js/src/model/history.ts
(``deriveMessages``, ``messagesOfSeqs``) over the stored events."""

from __future__ import annotations

import bisect
from typing import Any

from ..wire.pages import MessagesQuery, RequestDiffQuery
from .indexed import Event, SessionPages

JsonDict = dict[str, Any]
SURFACE = frozenset({"user/message", "system/message", "assistant/message", "tool/result"})


def resolve_seqs(p: SessionPages, seq: int) -> list[int]:
    """The full message seqs of the request/frozen at ``seq``: its chain of bases, root first (a
    base that points forward or loops ends the chain)."""
    chain: list[Event] = []
    seen: set[int] = set()
    cur: int | None = seq
    while cur is not None and 0 <= cur < p.count and p.types[cur] == "request/frozen" and cur not in seen:
        seen.add(cur)
        ev = p.events[cur]
        chain.append(ev)
        base = ev.get("baseRequestSeq")
        cur = base if isinstance(base, int) and base < cur else None
    out: list[int] = []
    for ev in reversed(chain):
        out.extend(ev.get("messageSeqs") or ())
    return out


def _classify(p: SessionPages, s: int, prev_turn: Any) -> str:
    if not 0 <= s < p.count:
        return "other"
    kind = p.types[s]
    if kind == "tool/result":
        return "tool result"
    if kind == "assistant/message":
        return "assistant"
    if kind == "system/message":
        return "system"
    if kind == "user/message":
        ev = p.events[s]
        message = ev.get("message") or {}
        if (message.get("source") or {}).get("kind") == "plugin":
            return "runtime context"
        turn = ev.get("turn")
        if prev_turn is not None and isinstance(turn, int) and prev_turn == turn:
            return "steering"  # a person's message inside the turn of the previous request
        return "user prompt"
    return "other"


def request_diff_page(p: SessionPages, q: RequestDiffQuery) -> JsonDict:
    frozen = p.frozen
    at = q.seq
    k = bisect.bisect_left(frozen, at) if 0 <= at < p.count and p.types[at] == "request/frozen" else bisect.bisect_right(frozen, at)
    if k >= len(frozen):
        return {"kind": "request-diff", "count": p.count, "fromSeq": None, "toSeq": None}
    to = frozen[k]
    prev = frozen[k - 1] if k > 0 else None
    after = resolve_seqs(p, to)
    before = resolve_seqs(p, prev) if prev is not None else []
    had, has = set(before), set(after)
    prev_turn = p.events[prev].get("turn") if prev is not None else None
    added = [s for s in after if s not in had]
    removed = [s for s in before if s not in has]
    items: list[JsonDict] = []
    for s in [*added, *removed][q.offset:q.offset + q.limit]:
        gone = s not in has
        item: JsonDict = {"seq": s, "kind": "removed" if gone else _classify(p, s, prev_turn),
                          "type": p.types[s] if 0 <= s < p.count else "?"}
        if 0 <= s < p.count:
            item["event"] = p.events[s]
        items.append(item)
    return {"kind": "request-diff", "count": p.count, "fromSeq": prev, "toSeq": to, "kept": len(after) - len(added),
            "added": len(added), "removed": len(removed), "offset": q.offset, "items": items}


def _contributes(ev: Event) -> Any:
    """The message a surface event contributes (none for an empty assistant or system message)."""
    message = ev.get("message")
    if not isinstance(message, dict):
        return None
    if message.get("role") in ("assistant", "system") and not message.get("content"):
        return None
    return message


def derive(p: SessionPages, through: int) -> list[int]:
    """The surface seqs of ``derive_messages()`` after the events through ``through``: appended,
    or replacing the run ``startSeq`` .. ``endSeq`` (js deriveMessages). Folded on from the last
    call's when it ended at or before ``through`` (a replay asks for the history a step later each
    time: the fold does not start again at seq 0 for each)."""
    end = min(through, p.count - 1)
    start, nodes = 0, []
    if p.derived is not None and p.derived[0] <= end:
        start, nodes = p.derived[0] + 1, list(p.derived[1])
    for s in range(start, end + 1):
        if p.types[s] not in SURFACE:
            continue
        op = p.events[s].get("surfaceOp")
        if isinstance(op, dict) and op.get("op") == "replace":
            try:
                i, j = nodes.index(op.get("startSeq")), nodes.index(op.get("endSeq"))  # type: ignore[arg-type]
            except ValueError:
                i = j = -1
            if i >= 0 and j >= i:
                nodes[i:j + 1] = [s]
                continue
        nodes.append(s)
    p.derived = (end, list(nodes))
    return nodes


def messages_page(p: SessionPages, q: MessagesQuery) -> JsonDict:
    # the seqs of the messages first, a page of them made after (a long session has tens of
    # thousands: one container each would wake the garbage collector over the whole index)
    if q.request:
        seqs = resolve_seqs(p, q.seq) if 0 <= q.seq < p.count and p.types[q.seq] == "request/frozen" else []
        found = [s for s in seqs if 0 <= s < p.count and p.events[s].get("seq") == s and _contributes(p.events[s]) is not None]
    else:
        found = [s for s in derive(p, q.seq) if _contributes(p.events[s]) is not None]
    offset = q.offset if q.offset is not None else max(0, len(found) - q.limit)
    return {"kind": "messages", "count": p.count, "seq": q.seq, "total": len(found), "offset": offset,
            "messages": [{"seq": s, "message": _contributes(p.events[s])} for s in found[offset:offset + q.limit]]}
