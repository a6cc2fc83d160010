"""The parts of the client fold for the transient frames and the inbox (``js/src/fold.ts`` mirrors each).

- ``assistant-stream``: ``start`` makes the streaming attempt; ``chunk`` folds one stream chunk into
  its blocks (``block-start`` / ``text-delta`` / ``reasoning-delta`` / ``tool-call-delta`` /
  ``block-end``) and counts it; ``end`` drops an abandoned attempt, and marks a committed one
  whose durable event has not arrived yet (``outcome``). Frames of another attempt are ignored.
- ``tool-runtime``: appends a phase to ``tools[callId]``; ``waiting`` follows the approval phase.
- ``agent/inbox/spliced``: ``inbox[target][start:start+removedCount] = inserted`` with ids
  ``i<seq>.<k>``, like the host's Inbox.
"""

from __future__ import annotations

from ..wire.events import InboxSpliced
from ..wire.fold_state import (
    InboxEntry,
    InboxState,
    StreamingAttempt,
    StreamingBlock,
    ToolPhase,
    ToolState,
    new_tool,
)
from ..wire.follow import AttemptInFlight
from ..wire.frames import (
    BlockEndChunk,
    BlockStartChunk,
    BlockType,
    ReasoningDeltaChunk,
    StreamChunkFrame,
    StreamEnd,
    StreamStart,
    TextDeltaChunk,
    ToolCallDeltaChunk,
    ToolRuntimeFrame,
    WireChunk,
)
from ..wire.messages import AnyMessage, ToolCallBlock

StreamFrame = StreamStart | StreamChunkFrame | StreamEnd


def new_attempt(f: StreamStart | AttemptInFlight) -> StreamingAttempt:
    return StreamingAttempt(attemptId=f.attempt_id, turn=f.turn, step=f.step, startedAfterSeq=f.started_after_seq,
                       blocks=[], chunks=0, outcome=None, lastChunkTime=None)


def fold_stream(attempt: StreamingAttempt | None, f: StreamFrame, cursor: int) -> StreamingAttempt | None:
    """The streaming attempt after one ``assistant-stream`` frame."""
    if isinstance(f, StreamStart):
        return new_attempt(f)
    if attempt is None or attempt["attemptId"] != f.attempt_id:
        return attempt
    if isinstance(f, StreamChunkFrame):
        fold_chunk(attempt, f.chunk)
        attempt["lastChunkTime"] = f.time
        return attempt
    if f.outcome.kind != "committed":
        return None
    if f.outcome.seq <= cursor:
        return None  # its event is already folded
    attempt["outcome"] = {"kind": "committed", "seq": f.outcome.seq}
    return attempt


def _block(attempt: StreamingAttempt, index: int, kind: BlockType) -> StreamingBlock:
    for block in attempt["blocks"]:
        if block["index"] == index:
            return block
    block = StreamingBlock(index=index, type=kind, text="", id=None, name=None, done=False)
    attempt["blocks"].append(block)
    attempt["blocks"].sort(key=lambda b: b["index"])
    return block


def fold_chunk(attempt: StreamingAttempt, c: WireChunk) -> None:
    """One stream chunk into the attempt's blocks (usage and finish chunks only count)."""
    attempt["chunks"] += 1
    if isinstance(c, BlockStartChunk):
        b = _block(attempt, c.index, c.block_type)
        b["id"], b["name"] = c.id or b["id"], c.name or b["name"]
    elif isinstance(c, TextDeltaChunk):
        _block(attempt, c.index, "text")["text"] += c.text
    elif isinstance(c, ReasoningDeltaChunk):
        _block(attempt, c.index, "reasoning")["text"] += c.text
    elif isinstance(c, ToolCallDeltaChunk):
        b = _block(attempt, c.index, "tool-call")
        b["id"], b["name"] = c.id or b["id"], c.name or b["name"]
        b["text"] += c.arguments_delta
    elif isinstance(c, BlockEndChunk):
        done = c.block
        b = _block(attempt, c.index, done.type)
        if isinstance(done, ToolCallBlock):
            b["id"], b["name"], b["text"] = done.id, done.name, done.arguments
        else:
            b["text"] = done.text
        b["done"] = True


def fold_tool(tools: dict[str, ToolState], f: ToolRuntimeFrame, *, again: bool = False) -> None:
    """One ``tool-runtime`` frame. ``again``: the frame may already be folded (a snapshot's live
    part after a reconnect) — then it is not appended twice."""
    tool = tools.setdefault(f.call_id, new_tool(f.call_id, f.name))
    phase = ToolPhase(phase=f.phase, status=f.status, detail=f.detail, time=f.time)
    if not (again and tool["phases"] and tool["phases"][-1] == phase):
        tool["phases"].append(phase)
    if phase["phase"] == "approval":
        tool["waiting"] = phase["status"] == "waiting"
    elif phase["phase"] == "result":
        tool["waiting"] = False


def text_of(message: AnyMessage, kind: str = "text") -> str:
    """The concatenated ``kind`` blocks of a message."""
    return "".join(getattr(b, "text", "") for b in message.content if b.type == kind)


def fold_splice(inbox: InboxState, event: InboxSpliced) -> tuple[list[InboxEntry], list[InboxEntry]]:
    """Apply one ``agent/inbox/spliced`` event: the (added, removed) entries."""
    lst = inbox[event.target]
    added = [InboxEntry(id=f"i{event.seq}.{k}", requestId=m.source.request_id, text=text_of(m))
             for k, m in enumerate(event.inserted)]
    removed = lst[event.start : event.start + event.removed_count]
    lst[event.start : event.start + event.removed_count] = added
    return added, removed
