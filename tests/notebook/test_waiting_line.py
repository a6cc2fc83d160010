"""The cell's ticking "waiting for the model · N s" line (issue 20 item 5): shown while the live
attempt has no chunk yet, re-rendered as the seconds pass (no new frame needed), gone with the
first chunk. The client model is fed the frames a host sends; the clock is the view's own."""

from __future__ import annotations

from dsh_notebook.client.model import ClientSessionModel
from dsh_notebook.notebook.cell.render import TurnView
from dsh_notebook.notebook.cell.segments import NoteSeg, Segment

REQUEST = "req_wait"


class Shown:
    def __init__(self) -> None:
        self.shows: list[list[Segment]] = []

    def show(self, segments: list[Segment]) -> None:
        self.shows.append(segments)


def _notes(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments if isinstance(s, NoteSeg)]


def _model() -> ClientSessionModel:
    model = ClientSessionModel("s_wait")
    model.submit(REQUEST, "hi")
    model.apply({"type": "event", "event": {
        "seq": 0, "time": 1, "type": "user/message", "turn": 1,
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}],
                    "source": {"kind": "user", "requestId": REQUEST}}}})
    model.apply({"type": "assistant-stream", "frame": {"kind": "start", "attemptId": "a1", "turn": 1, "step": 1,
                                                       "startedAfterSeq": 0}})
    return model


def test_the_cell_says_it_waits_for_the_first_chunk_and_stops_with_it() -> None:
    now = [100.0]
    sink = Shown()
    view = TurnView(REQUEST, sink, wait_every=1, clock=lambda: now[0])  # type: ignore[arg-type]
    model = _model()
    assert view.render(model) and _notes(sink.shows[-1]) == []  # not a second yet
    now[0] += 42.4
    assert view.render(model)  # the seconds changed, the model did not: shown again
    assert _notes(sink.shows[-1]) == ["waiting for the model · 42 s"]
    assert not view.render(model)  # nothing changed
    model.apply({"type": "assistant-stream", "frame": {"kind": "chunk", "attemptId": "a1", "index": 0, "time": 2,
                                                       "chunk": {"type": "text-delta", "index": 0, "text": "Hel"}}})
    assert view.render(model) and _notes(sink.shows[-1]) == []  # the first chunk: no longer waiting


def test_appended_text_says_it_every_ten_seconds_and_without_wait_every_never() -> None:
    now = [0.0]
    model = _model()
    view = TurnView(REQUEST, Shown(), wait_every=10, clock=lambda: now[0])  # type: ignore[arg-type]
    plain = TurnView(REQUEST, Shown(), clock=lambda: now[0])  # type: ignore[arg-type]
    view.segments(model)
    plain.segments(model)
    now[0] = 25.0
    assert _notes(view.segments(model)) == ["waiting for the model · 20 s"]
    assert _notes(plain.segments(model)) == []


def test_a_compaction_before_the_prompt_is_committed_is_said_in_its_turn() -> None:
    """The agent compacts at the start of a turn, before the prompt's message is committed: ``run``
    and the cell still say so (the turn's view starts at the prompt's claim)."""
    text = [{"type": "text", "text": "hi"}]
    source = {"kind": "user", "requestId": REQUEST}
    model = ClientSessionModel("s_wait")
    model.submit(REQUEST, "hi")
    for event in (
        {"type": "agent/inbox/spliced", "target": "next-turn", "start": 0, "removedCount": 0,
         "inserted": [{"role": "user", "content": text, "source": source}]},
        {"type": "turn/start", "turn": 1},
        {"type": "agent/inbox/spliced", "target": "next-turn", "start": 0, "removedCount": 1, "inserted": [],
         "outcome": "claimed"},
        {"type": "user/message", "turn": 1, "message": {"role": "user", "content": [{"type": "text", "text": "sum"}],
                                                        "source": {"kind": "plugin", "plugin": "dsh/compaction"}}},
        {"type": "context/compacted", "turn": 1, "summarySeq": 3, "startSeq": 0, "endSeq": 2, "replaced": 2,
         "trigger": "threshold", "tokensBefore": 900, "tokensAfter": 100, "provider": "local", "model": "m"},
        {"type": "user/message", "turn": 1, "message": {"role": "user", "content": text, "source": source}},
    ):
        model.apply({"type": "event", "event": {"seq": model.cursor + 1, "time": 1, **event}})
    notes = _notes(TurnView(REQUEST).segments(model))
    assert len(notes) == 1 and "900" in notes[0] and "100" in notes[0]
