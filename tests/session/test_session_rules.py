"""The Core Session's rules, one test each (DESIGN §4; issue 2 item 3)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from dsh_notebook.errors import ProvenanceError, SessionError
from dsh_notebook.session import Session
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    ReplaceOp,
    RequestHeader,
    SessionEndSeed,
    StepStart,
    ToolCall,
    ToolResult,
    ToolSchema,
    TurnStart,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import tool_text, user_text
from tests.session.helpers import assistant, new_session, tool_turn


def test_append_stamps_dense_seq_and_clock_time() -> None:
    s = new_session()
    raw = TurnStart(turn=1)
    stamped = [s.append(TurnStart(turn=k)) for k in range(5)]
    assert [e.seq for e in stamped] == [0, 1, 2, 3, 4]
    assert [e.time for e in stamped] == [1_700_000_000_000 + k for k in range(5)]
    assert raw.seq == -1  # the caller's object is not the committed one
    assert [e.seq for e in s.events] == list(range(5)) and s.last_seq == 4


def test_time_never_goes_backwards() -> None:
    times = iter([100, 50, 70, 200])
    s = Session("s", clock=lambda: next(times), created_at=0)
    assert [s.append(TurnStart(turn=1)).time for _ in range(4)] == [100, 100, 100, 200]


@pytest.mark.parametrize(
    "config",
    [{"t": math.nan}, {"t": math.inf}, {"t": -math.inf}, {"t": -0.0}, {"t": [1, {"u": -0.0}]},
     {"t": "a\ud800b"}, {"a\udfffb": 1}],
    ids=["nan", "inf", "-inf", "-0", "nested -0", "lone surrogate", "surrogate key"],
)  # fmt: skip
def test_non_lossless_payload_is_refused_and_nothing_committed(config: dict) -> None:
    s = new_session()
    with pytest.raises(SessionError) as err:
        s.append(RequestHeader(reason="initial", config=config))
    assert err.value.code == "NOT_LOSSLESS"
    assert len(s) == 0
    assert s.append(TurnStart(turn=1)).seq == 0  # the seq was not consumed


def test_lone_surrogate_in_message_text_is_refused() -> None:
    s = new_session()
    with pytest.raises(SessionError) as err:
        s.append(UserMessageEvent(message=user_text("bad \udc80 text")))
    assert err.value.code == "NOT_LOSSLESS" and len(s) == 0 and len(s.derive_messages()) == 0


def test_nan_in_tool_schema_is_refused() -> None:
    s = new_session()
    schema = ToolSchema(name="t", description="d", parameters={"default": math.nan})
    with pytest.raises(SessionError, match="NOT_LOSSLESS"):
        s.append(RequestHeader(reason="initial", config={}, tools=(schema,)))


def test_committed_events_are_immutable() -> None:
    s = new_session()
    config = {"model": "m", "opts": {"temperature": 0.5, "stop": ["x"]}}
    ev = s.append(RequestHeader(reason="initial", config=config))
    config["opts"]["stop"].append("y")  # the caller's dict is not the committed one
    assert ev.config["opts"]["stop"] == ["x"]
    with pytest.raises(ValidationError):
        ev.reason = "change"  # type: ignore[misc]
    for mutate in (
        lambda: ev.config.__setitem__("model", "other"),
        lambda: ev.config["opts"]["stop"].append("z"),
        lambda: ev.config["opts"].update(temperature=1.0),
        lambda: ev.config.pop("model"),
    ):
        with pytest.raises(TypeError):
            mutate()
    assert not hasattr(s.events, "append")
    assert s.line(0) == ev.model_dump_json(exclude_none=True)
    assert '"stop":["x"]' in s.line(0)


def test_observers_run_after_commit_and_failures_are_contained() -> None:
    s = new_session()
    seen: list[tuple[int, int, str]] = []

    def boom(event: object) -> None:
        raise RuntimeError("observer bug")

    s.subscribe(lambda e: seen.append((e.seq, len(s), s.line(e.seq))))
    s.subscribe(boom)
    late: list[int] = []
    s.subscribe(lambda e: late.append(e.seq))
    ev = s.append(TurnStart(turn=1))
    assert seen == [(0, 1, s.line(0))]  # the event was in the log when observers ran
    assert late == [0]  # a failing observer does not stop the others
    assert len(s.observer_errors) == 1 and "observer bug" in str(s.observer_errors[0])
    assert s.events[0] is ev


def test_unsubscribe_stops_notifications() -> None:
    s = new_session()
    got: list[int] = []
    off = s.subscribe(lambda e: got.append(e.seq))
    s.append(TurnStart(turn=1))
    off()
    s.append(TurnStart(turn=2))
    assert got == [0]


def test_reentrant_append_is_refused() -> None:
    s = new_session()
    s.subscribe(lambda e: s.append(TurnStart(turn=99)) if e.seq == 0 else None)
    s.append(TurnStart(turn=1))
    assert len(s) == 1
    assert isinstance(s.observer_errors[0], SessionError)
    assert s.observer_errors[0].code == "REENTRANT_APPEND"


def test_surface_append_derives_messages_but_not_bookkeeping() -> None:
    s = new_session()
    tool_turn(s, 1, ["c1"])
    s.append(AssistantMessageEvent(turn=1, step=2, message=assistant()))  # empty: skipped
    roles = [m.role for m in s.derive_messages()]
    assert roles == ["user", "assistant", "tool"]
    assert s.derive_messages().seqs == [1, 3, 5]
    assert s.surface == [1, 3, 5, 8]


def test_replace_must_cite_every_shadowed_node() -> None:
    s = new_session()
    a = s.append(UserMessageEvent(message=user_text("one")))
    b = s.append(UserMessageEvent(message=user_text("two")))
    summary = user_text("summary of one and two")
    with pytest.raises(ProvenanceError, match="missing \\[1\\]"):
        s.append(
            UserMessageEvent(
                message=summary, surface_op=ReplaceOp(start_seq=a.seq, end_seq=b.seq),
                source_event_seqs=(a.seq,),
            )
        )  # fmt: skip
    assert len(s) == 2
    before = s.derive_messages()
    s.append(
        UserMessageEvent(
            message=summary, surface_op=ReplaceOp(start_seq=a.seq, end_seq=b.seq),
            source_event_seqs=(a.seq, b.seq),
        )
    )  # fmt: skip
    after = s.derive_messages()
    assert [m.content[0].text for m in after] == ["summary of one and two"]  # type: ignore[union-attr]
    assert after.generation == before.generation + 1 and not after.extends(before)
    assert [m.content[0].text for m in before] == ["one", "two"]  # type: ignore[union-attr]
    assert s.surface == [2]


@pytest.mark.parametrize("ends", [(0, 5), (1, 0), (4, 4)])
def test_replace_ends_must_be_current_nodes_in_order(ends: tuple[int, int]) -> None:
    s = new_session()
    s.append(UserMessageEvent(message=user_text("one")))
    s.append(UserMessageEvent(message=user_text("two")))
    s.append(TurnStart(turn=1))
    with pytest.raises(ProvenanceError):
        s.append(
            UserMessageEvent(
                message=user_text("x"), surface_op=ReplaceOp(start_seq=ends[0], end_seq=ends[1]),
                source_event_seqs=(0, 1),
            )
        )  # fmt: skip


def test_tool_result_replacement_shadows_exactly_one_result_of_its_call() -> None:
    s = new_session()
    tool_turn(s, 1, ["c1", "c2"])  # results at seqs 5 and 7
    pruned = tool_text("c1", "[pruned]")
    with pytest.raises(ProvenanceError, match="exactly one tool/result"):
        s.append(
            ToolResult(
                turn=1, step=1, message=pruned, surface_op=ReplaceOp(start_seq=5, end_seq=7),
                source_event_seqs=(5, 7),
            )
        )  # fmt: skip
    with pytest.raises(ProvenanceError):
        s.append(
            ToolResult(
                turn=1, step=1, message=tool_text("c2", "x"),
                surface_op=ReplaceOp(start_seq=5, end_seq=5), source_event_seqs=(5,),
            )
        )  # fmt: skip
    s.append(
        ToolResult(
            turn=1, step=1, message=pruned, surface_op=ReplaceOp(start_seq=5, end_seq=5),
            source_event_seqs=(5,),
        )
    )  # fmt: skip
    texts = [m.text for m in s.derive_messages() if m.role == "tool"]  # type: ignore[union-attr]
    assert texts == ["[pruned]", "result of c2"]


@pytest.mark.parametrize(
    ("src", "why"),
    [((0, 0), "duplicates"), ((2,), "not an earlier"), ((5,), "not an earlier"),
     ((-1,), "not an earlier"), ((), "must not be empty")],
)  # fmt: skip
def test_provenance_unique_and_earlier(src: tuple[int, ...], why: str) -> None:
    s = new_session()
    s.append(TurnStart(turn=1))
    s.append(StepStart(turn=1, step=1))
    with pytest.raises(ProvenanceError, match=why):
        s.append(UserMessageEvent(message=user_text("x"), source_event_seqs=src))
    assert len(s) == 2
    s.append(UserMessageEvent(message=user_text("x"), source_event_seqs=(0, 1)))


def _call(s: Session, cid: str) -> int:
    return s.append(ToolCall(turn=1, step=1, call_id=cid, name="read", arguments="{}")).seq


def test_tool_result_must_cite_exactly_its_open_call() -> None:
    s = new_session()
    c1, c2 = _call(s, "c1"), _call(s, "c2")
    result = tool_text("c1", "ok")
    for bad in [None, (c2,), (c1, c2), (c1 + 100,)]:
        with pytest.raises(ProvenanceError):
            s.append(ToolResult(turn=1, step=1, message=result, source_event_seqs=bad))
    s.append(ToolResult(turn=1, step=1, message=result, source_event_seqs=(c1,)))
    assert s.open_tool_calls() == {"c2": [c2]}
    with pytest.raises(ProvenanceError):  # answered already: no longer open
        s.append(ToolResult(turn=1, step=1, message=result, source_event_seqs=(c1,)))


def test_tool_result_without_a_logged_call_carries_no_provenance() -> None:
    s = new_session()
    ev = s.append(ToolResult(turn=1, step=1, message=tool_text("never-called", "not started")))
    assert ev.source_event_seqs is None and s.derive_messages()[0].role == "tool"


def test_derive_messages_is_incremental() -> None:
    s = new_session()
    tool_turn(s, 1, ["c1"])
    h1 = s.derive_messages()
    tool_turn(s, 2, ["c2", "c3"])
    h2 = s.derive_messages()
    assert len(h1) == 3 and len(h2) == 7  # the earlier snapshot did not grow
    assert h2.extends(h1) and h2.seqs_since(h1) == h2.seqs[3:]
    assert h2[3:5] == [h2[3], h2[4]] and h2.seqs_between(3, 5) == h2.seqs[3:5]
    assert h2.seq_of(-1) == h2.seqs[-1]
    assert list(h1) == list(h2)[:3]


def test_restore_applies_the_same_rules_and_marks_the_seed() -> None:
    s = new_session()
    tool_turn(s, 1, ["c1"])
    r = Session.restore("s_test", list(s.events), lines=[s.line(k) for k in range(len(s))])
    assert isinstance(r.events[-1], SessionEndSeed) and r.first_live_seq == len(s) + 1
    assert [r.line(k) for k in range(len(s))] == [s.line(k) for k in range(len(s))]
    assert list(r.derive_messages()) == list(s.derive_messages())
    again = Session.restore("s_test", list(r.events))
    assert len(again) == len(r)  # already ends with an end-seed: no second one
    bad = list(s.events)
    bad[5] = bad[5].model_copy(update={"source_event_seqs": (3,)})  # cites the assistant msg
    with pytest.raises(ProvenanceError):
        Session.restore("s_test", bad)
    with pytest.raises(SessionError, match="BAD_SEQ"):
        Session.restore("s_test", list(s.events)[1:])
