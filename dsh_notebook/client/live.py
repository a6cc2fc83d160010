"""Small folds used by :class:`~dsh_notebook.client.model.ClientSessionModel`.

Assistant stream frames:

``start`` creates ``attempts[attemptId] = {attemptId, turn, step, startedAfterSeq, text,
reasoning, toolCalls}``; ``chunk`` appends a ``text-delta`` to ``text``, a ``reasoning-delta``
to ``reasoning``, and a tool-call ``block-start`` / ``tool-call-delta`` to
``toolCalls[str(index)] = {id, name, arguments}``; ``end`` removes the attempt (a committed
attempt's text lives on in its ``assistant/message`` event; an abandoned one leaves nothing).
Frames of an unknown attempt are ignored.
"""

from __future__ import annotations

from typing import Any


def fold_stream(attempts: dict[str, dict[str, Any]], f: dict[str, Any]) -> None:
    """Fold one ``assistant-stream`` frame into ``attempts`` (attemptId → live attempt)."""
    attempt_id, kind = str(f.get("attemptId")), f.get("kind")
    if kind == "start":
        attempts[attempt_id] = {
            **{k: f.get(k) for k in ("attemptId", "turn", "step", "startedAfterSeq")},
            "text": "", "reasoning": "", "toolCalls": {},
        }
        return
    attempt = attempts.get(attempt_id)
    if attempt is None:
        return
    if kind == "end":
        del attempts[attempt_id]
        return
    chunk = f.get("chunk") or {}
    ctype, index = chunk.get("type"), chunk.get("index")
    if ctype == "text-delta":
        attempt["text"] += chunk.get("text", "")
    elif ctype == "reasoning-delta":
        attempt["reasoning"] += chunk.get("text", "")
    elif ctype in ("tool-call-delta", "block-start") and (ctype == "tool-call-delta" or chunk.get("blockType") == "tool-call"):
        call = attempt["toolCalls"].setdefault(str(index), {"id": None, "name": None, "arguments": ""})
        call["id"] = chunk.get("id") or call["id"]
        call["name"] = chunk.get("name") or call["name"]
        call["arguments"] += chunk.get("argumentsDelta", "")


def text_of(message: dict[str, Any], kind: str = "text") -> str:
    """The concatenated ``kind`` blocks of a wire message."""
    return "".join(b.get("text", "") for b in message.get("content", ()) if b.get("type") == kind)


def fold_splice(
    inbox: dict[str, list[dict[str, Any]]], event: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Apply one ``agent/inbox/spliced`` event like the host's Inbox: (added, removed) items."""
    lst = inbox.setdefault(event["target"], [])
    start, count = event.get("start", 0), event.get("removedCount", 0)
    added = [
        {"id": f"i{event['seq']}.{k}", "requestId": (m.get("source") or {}).get("requestId"), "text": text_of(m)}
        for k, m in enumerate(event.get("inserted", ()))
    ]
    removed = lst[start : start + count]
    lst[start : start + count] = added
    return added, removed


def fold_control(session_id: str | None, frame: dict[str, Any]) -> tuple[list[dict[str, Any]] | None, str | None]:
    """A control frame's (queue, status) for ``session_id``; ``None`` where it says nothing."""
    kind = frame.get("type")
    if kind == "baseline":
        for entry in frame.get("sessions", ()):
            if entry.get("sessionId") == session_id:
                return list(entry.get("queue", ())), entry.get("status")
    elif frame.get("sessionId") == session_id:
        if kind == "queue":
            return list(frame.get("items", ())), None
        if kind == "status":
            return None, frame.get("status")
    return None, None
