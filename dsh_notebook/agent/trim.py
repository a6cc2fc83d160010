"""Cutting one oversized tool result so that a request fits (issue 20 item 4).

The cut is a fact like any other: a ``tool/result`` that replaces the original surface node
(``surfaceOp: replace``, ``sourceEventSeqs: [original]``) and keeps its head and tail with a
visible marker between them. The original stays in the log; only what the model sees shrinks.
"""

from __future__ import annotations

from ..session.history import MessageHistory
from ..session.session import Session
from ..wire.events import ReplaceOp, ToolResult
from ..wire.messages import TextBlock, tool_text
from .compaction import estimate_tokens

CUT_MARKER = "\n\n[... {count} characters cut by dsh: this tool result did not fit the model's context window ...]\n\n"


def largest_message(history: MessageHistory) -> tuple[int | None, int]:
    """The index and estimated tokens of the largest message of ``history``."""
    best, size = None, 0
    for i, message in enumerate(history):
        n = estimate_tokens([message])
        if n > size:
            best, size = i, n
    return best, size


def cut_result(session: Session, seq: int, keep_tokens: int) -> ToolResult | None:
    """Replace the tool result at ``seq`` by its head and tail (about ``keep_tokens``), or
    ``None`` when ``seq`` is not a tool result."""
    event = session.events[seq]
    if not isinstance(event, ToolResult):
        return None
    text = "".join(b.text for b in event.message.content if isinstance(b, TextBlock))
    keep = max(0, keep_tokens) * 4
    if len(text) <= keep:
        return None
    head = keep // 2
    tail = keep - head
    cut = text[:head] + CUT_MARKER.format(count=len(text) - keep) + text[len(text) - tail:]
    return session.append(ToolResult(
        turn=event.turn, step=event.step, error=event.error,
        message=tool_text(event.message.tool_call_id, cut, is_error=event.message.is_error),
        surface_op=ReplaceOp(start_seq=seq, end_seq=seq), source_event_seqs=(seq,),
    ))


__all__ = ["CUT_MARKER", "cut_result", "largest_message"]
