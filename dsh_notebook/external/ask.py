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

from pydantic import JsonValue

from ..errors import DshError
from ..wire.codes import received
from ..wire.endpoints import (
    Accepted,
    FollowArgs,
    PromptArgs,
    PromptCommand,
    SessionInfo,
    SessionRef,
)
from ..wire.envelopes import StreamEnded, StreamError
from ..wire.events import (
    AnyEvent,
    ApprovalAsked,
    AssistantMessageEvent,
    ToolCall,
    TurnEnd,
    UserMessageEvent,
)
from ..wire.follow import EventItem, FollowItemAdapter, Snapshot
from ..wire.messages import TextBlock
from .calls import ExternalCallRun, Outcome
from .cells import Part, clip
from .notebooks import Notebooks
from .wirelink import build


class TurnWatch:
    """What the follow stream says of the turn that answers one request."""

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.turn: int | None = None
        self.answer = ""
        self.end: TurnEnd | None = None

    def event(self, ev: AnyEvent) -> str | None:
        """Fold one event; a progress message, if it says something."""
        if isinstance(ev, UserMessageEvent) and ev.message.source.request_id == self.request_id:
            self.turn = ev.turn
            return f"the notebook's agent took the prompt (turn {self.turn})"
        if self.turn is None or getattr(ev, "turn", None) not in (None, self.turn):
            return None
        if isinstance(ev, AssistantMessageEvent):
            texts = [b.text for b in ev.message.content if isinstance(b, TextBlock)]
            if any(t.strip() for t in texts):
                self.answer = "".join(texts)
        elif isinstance(ev, ToolCall):
            return f"the notebook's agent calls {ev.name}"
        elif isinstance(ev, ApprovalAsked):
            return f"waiting for a person to approve the agent's {ev.name} in the notebook"
        elif isinstance(ev, TurnEnd) and ev.turn == self.turn:
            self.end = ev
        return None


async def ask_agent(run: ExternalCallRun, notebooks: Notebooks) -> Outcome:
    prompt = run.arguments.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise DshError("ask_agent needs a prompt", code="EMPTY_PROMPT")
    wire, sid = run.link.wire, run.session_id
    info = await wire.rpc("session/info", SessionRef(session_id=sid), SessionInfo)
    stream_id, frames = wire.open("session/follow", FollowArgs(session_id=sid, cursor=info.last_seq))
    watch = TurnWatch("ext-" + uuid.uuid4().hex[:12])
    try:
        command = build(PromptCommand, session_id=sid, request_id=watch.request_id, mode="queue", content=prompt)
        await wire.rpc("session/prompt", PromptArgs(request=command), Accepted)
        await run.ctx.progress.say("the prompt is queued in the notebook's session")
        while watch.end is None:
            frame = await run.link.guard(frames.get())
            if isinstance(frame, StreamError):
                raise DshError(frame.error.message, code=received(frame.error.code))
            if isinstance(frame, StreamEnded):
                raise DshError("the session's follow stream ended before the turn did", code="STREAM_ENDED")
            item = FollowItemAdapter.validate_python(frame.value)
            events = item.events if isinstance(item, Snapshot) else (item.event,) if isinstance(item, EventItem) else ()
            for ev in events:
                said = watch.event(ev)
                if said:
                    await run.ctx.progress.say(said)
    except asyncio.CancelledError:
        wire.post("session/cancel", SessionRef(session_id=sid))
        raise
    finally:
        wire.cancel(stream_id)
    reason = watch.end.reason
    parts = [Part("text", clip(watch.answer or "(the agent gave no text answer)", 50_000))]
    meta: dict[str, JsonValue] = {"turn": watch.turn, "reason": reason.kind, "requestId": watch.request_id}
    kind = reason.kind
    if kind not in ("aborted", "error"):  # completed, or a budget / a guard ended it: the answer so far
        if kind != "completed":
            parts.append(Part("text", f"(the agent's turn {watch.turn} ended {kind}: {reason.cause or ''})"))
        return Outcome(parts, meta=meta)
    error = reason.error
    code = received(error.code if error is not None else "CANCELLED")
    return Outcome(parts, meta=meta, error=DshError(f"the agent's turn {watch.turn} ended {kind}"
                                                    f"{': ' + error.message if error is not None else ''}", code=code))
