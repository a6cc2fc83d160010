"""Crash repair: close the last turn of a log whose process died mid-turn (DESIGN §4, seed 003).

:func:`close_interrupted_turn` appends, reusing the last event's time (the crash happened then,
not at resume):

1. for each tool-call block of an assistant message in the open turn that has no
   ``tool/result`` — a ``tool/result`` with ``isError``: code ``TOOL_OUTCOME_UNKNOWN`` citing its
   ``tool/call`` seq when the call was logged (it may have run: retry only if safe), else
   ``TOOL_NOT_STARTED`` with no provenance; then any other logged ``tool/call`` still open in the
   turn (``TOOL_OUTCOME_UNKNOWN``);
2. ``step/end`` if a step is open;
3. ``turn/end`` with reason ``interrupted``.

A log whose last turn ended (or that never started one) is left alone. Only resumed or inspected
logs are repaired, never a live session.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..wire.codes import ErrorCode
from ..wire.events import (
    AnyEvent,
    AssistantMessageEvent,
    StepEnd,
    StepStart,
    ToolCall,
    ToolErrorInfo,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
)
from ..wire.messages import tool_text

if TYPE_CHECKING:
    from .session import Session

__all__ = ["OUTCOME_UNKNOWN_TEXT", "close_interrupted_turn", "open_turn_start"]

OUTCOME_UNKNOWN_TEXT = (
    "Error: the session ended while this tool call was running; its outcome is unknown. "
    "Check the workspace before relying on it; retry only if the call is read-only or idempotent."
)
NOT_STARTED_TEXT = (
    "Error: the session ended before this tool call started; it did not run. "
    "Retry it if it is still needed."
)
FORKED_TEXT = (
    "Error: this session was forked at seq {at}, before this tool call had a result; in this "
    "fork the call has no outcome. Call the tool again if it is still needed."
)


def open_turn_start(events: list[AnyEvent] | tuple[AnyEvent, ...]) -> int | None:
    """Index of the last ``turn/start`` when no ``turn/end`` follows it, else ``None``."""
    for k in range(len(events) - 1, -1, -1):
        ev = events[k]
        if isinstance(ev, TurnEnd):
            return None
        if isinstance(ev, TurnStart):
            return k
    return None


def close_interrupted_turn(session: Session, *, forked_at: int | None = None) -> list[AnyEvent]:
    """Append the closers of an interrupted last turn; returns the events appended.

    ``forked_at``: the log was cut at this seq by a fork, not by a crash — the results say so
    (code ``FORKED_BEFORE_RESULT``: in this fork the call has no outcome) and ``turn/end`` has
    ``cause: "fork"``.
    """
    events = list(session.events)
    start = open_turn_start(events)
    if start is None:
        return []
    turn_ev = events[start]
    assert isinstance(turn_ev, TurnStart)
    at = events[-1].time
    open_calls = {cid: [s for s in seqs if s > start] for cid, seqs in session.open_tool_calls().items()}
    added: list[AnyEvent] = []

    def answer(turn: int, step: int, call_id: str, name: str, call_seq: int | None) -> None:
        if call_seq is None:  # a same-id call left open earlier must be cited (provenance rule)
            call_seq = next(iter(session.open_tool_calls().get(call_id, [])), None)
        if call_seq in open_calls.get(call_id, []):
            open_calls[call_id].remove(call_seq)
        code: ErrorCode
        if forked_at is not None:
            text = FORKED_TEXT.format(at=forked_at)
            code, src = "FORKED_BEFORE_RESULT", (call_seq,) if call_seq is not None else None
        elif call_seq is not None:
            text, code, src = OUTCOME_UNKNOWN_TEXT, "TOOL_OUTCOME_UNKNOWN", (call_seq,)
        else:
            text, code, src = NOT_STARTED_TEXT, "TOOL_NOT_STARTED", None
        result = ToolResult(
            turn=turn,
            step=step,
            message=tool_text(call_id, text, is_error=True),
            error=ToolErrorInfo(name=name, code=code),
            source_event_seqs=src,
        )
        added.append(session.append(result, time=at))

    # segments: each assistant message with its following events up to the next one
    marks = [k for k in range(start, len(events)) if isinstance(events[k], AssistantMessageEvent)]
    for n, k in enumerate(marks):
        msg_ev = events[k]
        assert isinstance(msg_ev, AssistantMessageEvent)
        end = marks[n + 1] if n + 1 < len(marks) else len(events)
        segment = events[k + 1 : end]
        results = Counter(e.message.tool_call_id for e in segment if isinstance(e, ToolResult))
        for block in msg_ev.message.tool_calls:
            if results[block.id] > 0:
                results[block.id] -= 1
                continue
            seqs = [s for s in open_calls.get(block.id, []) if k < s < end]
            answer(msg_ev.turn, msg_ev.step, block.id, block.name, seqs[0] if seqs else None)
    for cid, seqs in list(open_calls.items()):  # logged calls no assistant block accounts for
        for s in list(seqs):
            call = events[s]
            assert isinstance(call, ToolCall)
            answer(call.turn, call.step, cid, call.name, s)

    step_open: StepStart | None = None
    for ev in events[start:]:
        if isinstance(ev, StepStart):
            step_open = ev
        elif isinstance(ev, StepEnd):
            step_open = None
    if step_open is not None:
        added.append(session.append(StepEnd(turn=step_open.turn, step=step_open.step), time=at))
    reason = TurnEndReason(kind="interrupted", cause="fork" if forked_at is not None else None)
    added.append(session.append(TurnEnd(turn=turn_ev.turn, reason=reason), time=at))
    return added
