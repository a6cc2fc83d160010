"""The parts of the client fold for live frames and the inbox (``js/src/fold.ts`` mirrors each).

- ``assistant-stream``: ``start`` makes the live attempt; ``chunk`` folds one stream chunk into
  its blocks (``block-start`` / ``text-delta`` / ``reasoning-delta`` / ``tool-call-delta`` /
  ``block-end``) and counts it; ``end`` drops an abandoned attempt, and marks a committed one
  whose durable event has not arrived yet (``outcome``). Frames of another attempt are ignored.
- ``tool-runtime``: appends a phase to ``tools[callId]``; ``waiting`` follows the approval phase.
- ``agent/inbox/spliced``: ``inbox[target][start:start+removedCount] = inserted`` with ids
  ``i<seq>.<k>``, like the host's Inbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .state import InboxEntry, LiveAttempt, LiveBlock, ToolPhase, ToolState, new_tool

Frame = Mapping[str, Any]


def new_attempt(f: Frame) -> LiveAttempt:
    return LiveAttempt(attemptId=str(f.get("attemptId")), turn=f.get("turn"), step=f.get("step"),
                       startedAfterSeq=f.get("startedAfterSeq"), blocks=[], chunks=0, outcome=None,
                       lastChunkTime=None)


def fold_stream(attempt: LiveAttempt | None, f: Frame, cursor: int) -> LiveAttempt | None:
    """The live attempt after one ``assistant-stream`` frame."""
    kind = f.get("kind")
    if kind == "start":
        return new_attempt(f)
    if attempt is None or attempt["attemptId"] != f.get("attemptId"):
        return attempt
    if kind == "chunk":
        fold_chunk(attempt, f.get("chunk") or {})
        if f.get("time") is not None:
            attempt["lastChunkTime"] = f["time"]
        return attempt
    outcome = f.get("outcome") or {"kind": "abandoned"}
    if outcome.get("kind") != "committed":
        return None
    seq = outcome.get("seq")
    if seq is not None and seq <= cursor:
        return None  # its event is already folded
    attempt["outcome"] = {"kind": "committed", "seq": seq}
    return attempt


def _block(attempt: LiveAttempt, index: int, kind: Any) -> LiveBlock:
    for block in attempt["blocks"]:
        if block["index"] == index:
            return block
    block = LiveBlock(index=index, type=kind, text="", id=None, name=None, done=False)
    attempt["blocks"].append(block)
    attempt["blocks"].sort(key=lambda b: b["index"])
    return block


def fold_chunk(attempt: LiveAttempt, c: Frame) -> None:
    """One stream chunk (as ``chunk_to_dict`` writes it) into the attempt's blocks."""
    attempt["chunks"] += 1
    ctype, index = c.get("type"), c.get("index") or 0
    if ctype == "block-start":
        b = _block(attempt, index, c.get("blockType") or "text")
        b["id"], b["name"] = c.get("id") or b["id"], c.get("name") or b["name"]
    elif ctype == "text-delta":
        _block(attempt, index, "text")["text"] += c.get("text") or ""
    elif ctype == "reasoning-delta":
        _block(attempt, index, "reasoning")["text"] += c.get("text") or ""
    elif ctype == "tool-call-delta":
        b = _block(attempt, index, "tool-call")
        b["id"], b["name"] = c.get("id") or b["id"], c.get("name") or b["name"]
        b["text"] += c.get("argumentsDelta") or ""
    elif ctype == "block-end":
        done = c.get("block") or {}
        b = _block(attempt, index, done.get("type") or "text")
        if done.get("type") == "tool-call":
            b["id"], b["name"], b["text"] = done.get("id"), done.get("name"), done.get("arguments") or ""
        elif done:
            b["text"] = done.get("text") or ""
        b["done"] = True


def fold_tool(tools: dict[str, ToolState], f: Frame, *, again: bool = False) -> None:
    """One ``tool-runtime`` frame. ``again``: the frame may already be folded (a snapshot's live
    part after a reconnect) — then it is not appended twice."""
    call_id = str(f.get("callId"))
    tool = tools.setdefault(call_id, new_tool(call_id, str(f.get("name") or "?")))
    phase = ToolPhase(phase=str(f.get("phase")), status=str(f.get("status")), detail=f.get("detail"),
                      time=f.get("time"))
    if not (again and tool["phases"] and tool["phases"][-1] == phase):
        tool["phases"].append(phase)
    if phase["phase"] == "approval":
        tool["waiting"] = phase["status"] == "waiting"
    elif phase["phase"] == "result":
        tool["waiting"] = False


def text_of(message: Frame, kind: str = "text") -> str:
    """The concatenated ``kind`` blocks of a wire message."""
    return "".join(b.get("text") or "" for b in message.get("content") or () if b.get("type") == kind)


def fold_splice(inbox: dict[str, list[InboxEntry]], event: Frame) -> tuple[list[InboxEntry], list[InboxEntry]]:
    """Apply one ``agent/inbox/spliced`` event: the (added, removed) entries."""
    lst = inbox.setdefault(str(event["target"]), [])
    start, count = event.get("start") or 0, event.get("removedCount") or 0
    added = [
        InboxEntry(id=f"i{event['seq']}.{k}", requestId=(m.get("source") or {}).get("requestId"), text=text_of(m))
        for k, m in enumerate(event.get("inserted") or ())
    ]
    removed = lst[start : start + count]
    lst[start : start + count] = added
    return added, removed
