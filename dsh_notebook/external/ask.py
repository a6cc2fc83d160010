"""``ask_agent {path, prompt}`` (issue 41): a turn of the notebook's own agent, for an external one.

The prompt is queued in the notebook's session (``session/prompt``, as ``%dsh`` sends one) and
the turn followed (``session/follow`` from the log's end): its tool calls and approvals become
progress notifications (a call that asks waits for a person in the notebook, as always), its last
answer the result. A turn that does not complete is a coded error (``CANCELLED`` when stopped,
its own code when it failed). An MCP cancel cancels the turn (``session/cancel``).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from ..errors import DshError
from ..wire.base import tag
from ..wire.codes import received
from .calls import ExternalCallRun, Outcome
from .cells import Part, clip


class TurnWatch:
    """What the follow stream says of the turn that answers one request."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.turn: int | None = None
        self.answer = ""
        self.end: dict[str, Any] | None = None

    def event(self, ev: dict[str, Any]) -> str | None:
        """Fold one event; a progress message, if it says something."""
        kind = tag(ev)
        if kind == "user/message" and ((ev.get("message") or {}).get("source") or {}).get("requestId") == self.request_id:
            self.turn = ev.get("turn")
            return f"the notebook's agent took the prompt (turn {self.turn})"
        if self.turn is None or ev.get("turn") not in (None, self.turn):
            return None
        if kind == "assistant/message":
            texts = [b.get("text", "") for b in (ev.get("message") or {}).get("content", []) if tag(b) == "text"]
            if any(t.strip() for t in texts):
                self.answer = "".join(texts)
        elif kind == "tool/call":
            return f"the notebook's agent calls {ev.get('name')}"
        elif kind == "approval/asked":
            return f"waiting for a person to approve the agent's {ev.get('name')} in the notebook"
        elif kind == "turn/end" and ev.get("turn") == self.turn:
            self.end = ev
        return None


async def ask_agent(run: ExternalCallRun, notebooks: Any) -> Outcome:
    prompt = run.arguments.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise DshError("ask_agent needs a prompt", code="EMPTY_PROMPT")
    wire, sid = run.link.wire, run.session_id
    info = await wire.rpc("session/info", {"sessionId": sid})
    stream_id, frames = wire.open("session/follow", {"sessionId": sid, "cursor": info.get("lastSeq", -1)})
    watch = TurnWatch("ext-" + uuid.uuid4().hex[:12])
    try:
        await wire.rpc("session/prompt", {"request": {"sessionId": sid, "requestId": watch.request_id, "mode": "queue",
                                                      "content": [{"type": "text", "text": prompt}]}})
        await run.ctx.progress.say("the prompt is queued in the notebook's session")
        while watch.end is None:
            frame = await run.link.guard(frames.get())
            if tag(frame) == "error":
                error = frame.get("error") or {}
                raise DshError(str(error.get("message")), code=received(str(error.get("code", "STREAM_ENDED"))))
            if tag(frame) == "end":
                raise DshError("the session's follow stream ended before the turn did", code="STREAM_ENDED")
            value = frame.get("value") or {}
            kind = tag(value)
            events = value.get("events", []) if kind == "snapshot" else [value["event"]] if kind == "event" else []
            for ev in events:
                said = watch.event(ev)
                if said:
                    await run.ctx.progress.say(said)
    except asyncio.CancelledError:
        wire.post("session/cancel", {"sessionId": sid})
        raise
    finally:
        wire.cancel(stream_id)
    reason = watch.end.get("reason") or {}
    parts = [Part("text", clip(watch.answer or "(the agent gave no text answer)", 50_000))]
    meta = {"turn": watch.turn, "reason": reason.get("kind"), "requestId": watch.request_id}
    kind = reason.get("kind")
    if kind not in ("aborted", "error"):  # completed, or a budget / a guard ended it: the answer so far
        if kind not in ("completed", None):
            parts.append(Part("text", f"(the agent's turn {watch.turn} ended {kind}: {reason.get('cause') or ''})"))
        return Outcome(parts, meta=meta)
    error = reason.get("error") or {}
    code = received(str(error.get("code") or "CANCELLED"))
    return Outcome(parts, meta=meta, error=DshError(f"the agent's turn {watch.turn} ended {kind}"
                                                    f"{': ' + str(error.get('message')) if error else ''}", code=code))
