"""The text view of one turn, read from the client fold: ordered segments of text, tools and notes.

:class:`TurnView` never reads wire frames: it asks the :class:`~dsh_notebook.client.model.ClientSessionModel`
of the follow for the events of *this* prompt's turn — from the ``user/message`` of its
submission to its ``turn/end`` — and turns them into segments: the answer text of each step
(streaming: the live attempt's text; committed: the ``assistant/message``), one line per tool
call (name, arguments, its last runtime phase, the result summary or error) and notices
(a denied approval, a retry, an abort). A *sink* shows the segments (:mod:`.sinks`): in a kernel
a display updated in place; in a terminal (and the ``run`` CLI) an append-only stream. The
segments and the sink's protocol are :mod:`.segments`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...client.model import ClientSessionModel
from ...client.summary import summarize_result, tool_outcome
from ...wire.events import (
    AnyEvent,
    ApprovalAsked,
    ApprovalDecided,
    AssistantAttempt,
    AssistantMessageEvent,
    ContextCompacted,
    DebugEdit,
    LlmRetry,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from ...wire.fold_state import ToolState
from ..context.nsdiff import short_form
from .segments import NoteSeg, Segment, Sink, TextSeg, ToolSeg, format_arguments

__all__ = ["NoteSeg", "Segment", "Sink", "TextSeg", "ToolSeg", "TurnView", "format_arguments", "summarize_result"]  # segments re-exported


@dataclass
class TurnView:
    """The segments of the turn that answers ``request_id``, re-read from the model on demand."""

    request_id: str
    sink: Sink | None = None
    notes: list[tuple[int, str]] = field(default_factory=list)  # (cursor when added, text): local notes
    revision: int = -1
    wait_every: int | None = None  # "waiting for the model · N s" in steps of this many seconds (None: never)
    clock: Callable[[], float] = time.monotonic
    _waiting: tuple[str, float] | None = field(default=None, init=False, repr=False)  # (attempt, first seen)
    _wait_shown: int | None = field(default=None, init=False, repr=False)

    def waiting_since(self, model: ClientSessionModel) -> float | None:
        """When (this view's clock) the live attempt began waiting for its first chunk; ``None``
        when no attempt waits or the view shows no wait."""
        a = model.attempt
        if self.wait_every is None or a is None or a["chunks"] != 0 or a["outcome"] is not None:
            self._waiting = None
            return None
        if self._waiting is None or self._waiting[0] != a["attemptId"]:
            self._waiting = (a["attemptId"], self.clock())
        return self._waiting[1]

    def waited(self, model: ClientSessionModel) -> int | None:
        """Whole seconds the live attempt has waited for its first chunk, in ``wait_every`` steps
        (``None``: no attempt waiting, or not yet one step)."""
        since = self.waiting_since(model)
        if since is None or self.wait_every is None:
            return None
        steps = int(self.clock() - since) // self.wait_every
        return steps * self.wait_every if steps else None

    def add_note(self, text: str, cursor: int = 1 << 62) -> None:
        """A note of this client (not a session fact), shown after the events up to ``cursor``."""
        self.notes.append((cursor, text))
        self.revision = -1

    def segments(self, model: ClientSessionModel) -> list[Segment]:
        """This turn's segments now (call under the model's lock)."""
        sub = model.submissions.get(self.request_id)
        if sub is None or sub["seq"] is None:
            return [NoteSeg(f"l{i}", t) for i, (_c, t) in enumerate(self.notes)]
        end = model.submission_outcome(self.request_id)
        last = end["seq"] if end is not None and end["seq"] is not None else model.cursor
        out: list[Segment] = []
        notes = list(enumerate(self.notes))
        # from the claim of the prompt: a compaction before its message is committed belongs to this turn
        claimed = sub["claimSeq"] if sub["claimSeq"] is not None else sub["seq"]
        first = max(min(sub["seq"], claimed), model.start + 1)
        for seq in range(first, last + 1):
            while notes and notes[0][1][0] < seq:
                i, (_c, text) = notes.pop(0)
                out.append(NoteSeg(f"l{i}", text))
            event = model.event(seq)
            if event is not None:
                _segments_of(event, model, out)
        if end is None and model.attempt is not None and model.attempt["outcome"] is None:
            a = model.attempt
            out.append(TextSeg(f"{a['turn']}.{a['step']}", model.streaming_text()))
            waited = self.waited(model)
            if waited is not None:  # a slow server (CPU prompt processing): the cell says it is waiting
                out.append(NoteSeg(f"w{a['attemptId']}:{waited}", f"waiting for the model · {waited} s"))
        out.extend(NoteSeg(f"l{i}", text) for i, (_c, text) in notes)
        return [s for s in out if not (isinstance(s, TextSeg) and not s.text)]

    def render(self, model: ClientSessionModel) -> bool:
        """Hand the segments to the sink if the model changed since the last call."""
        waited = self.waited(model)
        if self.sink is None or (model.revision == self.revision and waited == self._wait_shown):
            return False
        self.revision, self._wait_shown = model.revision, waited
        self.sink.show(self.segments(model))
        return True


def tool_segment(tool: ToolState, model: ClientSessionModel) -> ToolSeg:
    edited = edited_arguments(model, tool["callId"], tool["callSeq"], tool["resultSeq"])
    seg = ToolSeg(tool["callId"], tool["name"], edited or tool["arguments"] or "", edited=edited is not None)
    if tool["phases"]:
        last = tool["phases"][-1]
        seg.phase, seg.status = last["phase"], last["status"]
        details = [p["detail"] for p in tool["phases"] if p["detail"] and p["phase"] in ("execute", "progress")]
        seg.detail = str(details[-1])[:120] if details and last["phase"] in ("execute", "progress") else None
    result = model.event(tool["resultSeq"])
    if isinstance(result, ToolResult):
        seg.done = True
        outcome = tool_outcome(tool["name"], result.message.text, is_error=bool(result.message.is_error),
                               code=result.error.code if result.error else None, meta=result.meta)
        if result.message.is_error or result.error:
            seg.error = outcome.text
        else:
            seg.result, seg.failed = outcome.text, not outcome.ok
        changes = (result.meta or {}).get("namespace")
        if isinstance(changes, dict):
            seg.namespace = short_form(changes)  # type: ignore[arg-type]
    return seg


def _segments_of(e: AnyEvent, model: ClientSessionModel, out: list[Segment]) -> None:
    if isinstance(e, AssistantMessageEvent):
        out.append(TextSeg(f"{e.turn}.{e.step}", e.message.text))
    elif isinstance(e, ToolCall):
        if e.call_id in model.tools:
            out.append(tool_segment(model.tools[e.call_id], model))
    else:
        note = _note_for(e)
        if note is not None:
            out.append(NoteSeg(f"n{e.seq}", note))


def _note_for(event: AnyEvent) -> str | None:
    if isinstance(event, ApprovalAsked):
        return None  # shown on the tool line (tool-runtime approval frame)
    if isinstance(event, ApprovalDecided) and (event.decision != "allow" or event.rule):
        rule = f" ({event.rule})" if event.rule else ""
        mode = f" · mode {event.mode}" if event.mode else ""  # what the permission mode was (issue 36)
        return f"{event.name}: {event.decision}" + (f" by {event.by}" if event.by else "") + rule + mode
    if isinstance(event, ContextCompacted):
        return (f"context compacted ({event.trigger}): {event.replaced} earlier messages summarised into one; "
                f"~{event.tokens_before} → ~{event.tokens_after} tokens")
    if isinstance(event, LlmRetry):
        return f"model error [{event.error.code}] {event.error.message}; retry {event.attempt} in {event.delay_ms} ms"
    if isinstance(event, AssistantAttempt) and event.error is not None:
        return f"model attempt failed: [{event.error.code}] {event.error.message}"
    if isinstance(event, TurnEnd) and event.reason.kind not in ("completed", "error"):  # errors: raised
        reason = event.reason
        extra = f" ({reason.cause}{f' {reason.limit}' if reason.limit is not None else ''})" if reason.cause else ""
        if reason.error:
            extra += f": [{reason.error.code}] {reason.error.message}"
        return f"turn {event.turn} ended {reason.kind}{extra}"
    return None


def edited_arguments(model: ClientSessionModel, call_id: str, call_seq: int | None,
                     result_seq: int | None) -> str | None:
    """The arguments a call runs with after the debugger's edits (the last ``debug/edit`` of
    them, between its ``tool/call`` and ``tool/result``); ``None`` when they were not edited.
    What an approval asks about and what the cell shows must be what runs, not the model's."""
    if call_seq is None:
        return None
    last = result_seq if result_seq is not None else model.cursor
    for seq in range(last, call_seq, -1):
        event = model.event(seq)
        if isinstance(event, DebugEdit) and event.target == "arguments" and event.call_id == call_id:
            return event.after if isinstance(event.after, str) else json.dumps(event.after)
    return None
