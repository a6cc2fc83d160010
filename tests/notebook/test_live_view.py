"""The live clients' turn view (issue 39 items 8 and 11): the cell's waiting note from the attempt's
first second, ticking; a failed attempt said once, its retry without the error again. The client
model is fed the frames a host sends; the clock is the view's own (no sleeping)."""

from __future__ import annotations

import io
from typing import Any

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.host.waiting import GRACE_S
from dsh_notebook.notebook.cell.live_view import LiveTurnView
from dsh_notebook.notebook.cell.segments import NoteSeg, Segment
from dsh_notebook.notebook.cell.sinks import TerminalSink

REQUEST = "req_live"


def _notes(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments if isinstance(s, NoteSeg)]


def _model() -> ClientSessionModel:
    model = ClientSessionModel("s_live")
    model.submit(REQUEST, "hi")
    _event(model, {"type": "user/message", "turn": 1, "message": {
        "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user", "requestId": REQUEST}}})
    return model


def _event(model: ClientSessionModel, event: dict[str, Any]) -> None:
    model.apply({"type": "event", "event": {"seq": model.cursor + 1, "time": 1, **event}})


def _start(model: ClientSessionModel, attempt_id: str) -> None:
    model.apply({"type": "assistant-stream", "frame": {"kind": "start", "attemptId": attempt_id, "turn": 1,
                                                       "step": 1, "startedAfterSeq": model.cursor}})


def test_the_waiting_note_shows_in_the_first_second_and_ticks_each_second() -> None:
    now = [100.0]
    model = _model()
    _start(model, "a1")
    view = LiveTurnView(REQUEST, wait_every=1, clock=lambda: now[0])
    assert _notes(view.segments(model)) == []  # an answer that comes at once shows none
    now[0] += GRACE_S
    assert _notes(view.segments(model)) == ["waiting for the model · 0 s"]  # within the first second
    now[0] += 0.6
    assert _notes(view.segments(model)) == ["waiting for the model · 1 s"]
    now[0] += 41
    assert _notes(view.segments(model)) == ["waiting for the model · 42 s"]
    assert _notes(LiveTurnView(REQUEST, clock=lambda: now[0]).segments(model)) == []  # text clients: a ticker


def test_a_failed_attempt_is_said_once_and_its_retry_says_only_when() -> None:
    model = _model()
    _start(model, "a1")
    error = {"code": "SERVER_ERROR", "message": "the provider failed (HTTP 503): overloaded", "status": 503}
    _event(model, {"type": "assistant/attempt", "turn": 1, "step": 1, "attempt": 1, "error": error})
    _event(model, {"type": "llm/retry", "turn": 1, "step": 1, "attempt": 1, "error": error, "delayMs": 500})
    out = io.StringIO()
    view = LiveTurnView(REQUEST, TerminalSink(out))
    view.render(model)
    assert out.getvalue().count("overloaded") == 1, out.getvalue()
    assert _notes(view.segments(model)) == [
        "model attempt failed: [SERVER_ERROR] the provider failed (HTTP 503): overloaded", "retry 1 in 500 ms"]
    # a retry with no failed attempt before it (nothing else named the error) keeps its words
    lone = _model()
    _event(lone, {"type": "llm/retry", "turn": 1, "step": 1, "attempt": 1, "error": error, "delayMs": 500})
    assert ["overloaded" in n for n in _notes(LiveTurnView(REQUEST).segments(lone))] == [True]
