"""Hypothesis properties: any events and faults → a valid request; repair idempotent; log
round-trips are the identity."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.models.chat_format import to_openai_messages
from dsh_notebook.session import PairingRepairer, Session, SessionLog, load_log, repair_pairing
from dsh_notebook.session.lenient import inspect_log
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    StepEnd,
    StepStart,
    ToolCall,
    ToolResult,
    TurnEnd,
    TurnEndReason,
    TurnStart,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import AnyMessage, tool_text, user_text
from tests.session.helpers import RawLog, assistant, new_session
from tests.support.openai_validator import validate_chat_request

IDS = st.sampled_from(["c0", "c1", "c2", "call_0", ""])
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- message level ---------------------------------------------------------------------------

message = st.one_of(
    st.builds(lambda t: user_text(t), st.text(max_size=5)),
    st.builds(lambda ids, t: assistant(*ids, text=t), st.lists(IDS, max_size=3), st.text(max_size=3)),
    st.builds(lambda c: tool_text(c, "r"), IDS),
)


@SETTINGS
@given(st.lists(message, max_size=25))
def test_repaired_messages_are_always_a_valid_request_and_repair_is_idempotent(
    msgs: list[AnyMessage],
) -> None:
    once = repair_pairing([user_text("start"), *msgs])
    validate_chat_request(to_openai_messages(once.messages))
    twice = repair_pairing(once.messages)
    assert twice.messages == once.messages and twice.changes == []
    repair_pairing(once.messages, strict=True)  # nothing left to repair


# --- event level, with injected faults -----------------------------------------------------

step_plan = st.fixed_dictionaries(
    {
        "calls": st.lists(IDS, max_size=3),
        "log_call": st.lists(st.booleans(), min_size=3, max_size=3),
        "answer": st.lists(st.booleans(), min_size=3, max_size=3),
        "orphan": st.one_of(st.none(), IDS),
        "dup_result": st.booleans(),
        "end_step": st.booleans(),
    }
)
turn_plan = st.fixed_dictionaries(
    {"steps": st.lists(step_plan, min_size=1, max_size=3), "end": st.booleans(), "lead_orphan": st.booleans()}
)


def build_raw(turns: list[dict[str, Any]]) -> RawLog:
    """A log as a buggy or dying writer may leave it: every fault lands, no rule is checked."""
    raw = RawLog()
    for t, plan in enumerate(turns, start=1):
        if plan["lead_orphan"]:
            raw.result("ghost", turn=t)
        raw.add("turn/start", turn=t)
        raw.user(f"prompt {t}", turn=t)
        for k, st_ in enumerate(plan["steps"], start=1):
            raw.add("step/start", turn=t, step=k)
            raw.assistant(*st_["calls"], text="thinking", turn=t, step=k)
            for n, cid in enumerate(st_["calls"]):
                seq = raw.call(cid, turn=t, step=k) if st_["log_call"][n] else None
                if st_["answer"][n]:
                    raw.result(cid, cite=seq, turn=t, step=k)
                    if st_["dup_result"]:
                        raw.result(cid, cite=seq, turn=t, step=k)
            if st_["orphan"] is not None:
                raw.result(st_["orphan"], turn=t, step=k)
            if st_["end_step"]:
                raw.add("step/end", turn=t, step=k)
        if plan["end"]:
            raw.add("turn/end", turn=t, reason={"kind": "completed"})
    return raw


@SETTINGS
@given(st.lists(turn_plan, min_size=1, max_size=4), st.sampled_from([b"", b'{"seq":99,"ti', b"{"]))
def test_any_broken_log_yields_a_valid_next_request(turns: list[dict[str, Any]], torn: bytes) -> None:
    raw = build_raw(turns)
    with tempfile.TemporaryDirectory() as d:
        path = raw.write(Path(d) / "s.jsonl", torn_tail=torn)
        before = path.read_bytes()
        report = inspect_log(path)
        assert path.read_bytes() == before  # inspection never writes
    validate_chat_request(to_openai_messages(report.next_messages))
    assert repair_pairing(report.next_messages).changes == []
    assert len(report.events) == len(raw.events)  # only the torn tail was dropped


# --- logs written by a real Session ----------------------------------------------------------


def build_session(turns: list[dict[str, Any]]) -> Session:
    """The same plans through a real Session (which refuses what breaks its rules)."""
    s = new_session()
    for t, plan in enumerate(turns, start=1):
        s.append(TurnStart(turn=t))
        s.append(UserMessageEvent(turn=t, message=user_text(f"prompt {t} \u00e9\u4e2d")))
        for k, st_ in enumerate(plan["steps"], start=1):
            s.append(StepStart(turn=t, step=k))
            calls = [c or "x" for c in st_["calls"]]
            s.append(AssistantMessageEvent(turn=t, step=k, message=assistant(*calls)))
            for n, cid in enumerate(calls):
                if not st_["log_call"][n]:
                    continue
                call = s.append(ToolCall(turn=t, step=k, call_id=cid, name="read", arguments="{}"))
                if st_["answer"][n]:
                    msg = tool_text(cid, "ok\n\t\"quoted\"")
                    s.append(ToolResult(turn=t, step=k, message=msg, source_event_seqs=(call.seq,)))
            if st_["end_step"]:
                s.append(StepEnd(turn=t, step=k))
        if plan["end"]:
            s.append(TurnEnd(turn=t, reason=TurnEndReason(kind="completed")))
    return s


@SETTINGS
@given(st.lists(turn_plan, min_size=1, max_size=4))
def test_log_round_trip_is_identity_and_incremental_repair_matches(turns: list[dict[str, Any]]) -> None:
    s = build_session(turns)
    repairer = PairingRepairer()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "s.jsonl"
        log = SessionLog(s, path)
        log.flush()
        log.close()
        loaded = load_log(path)
        stored = loaded.lines
    assert stored == [s.line(k) for k in range(len(s))]
    assert loaded.events == list(s.events)
    restored = Session.restore(s.id, loaded.events, mark_seed=False)
    assert [restored.line(k) for k in range(len(s))] == stored  # re-serialised on demand
    history = restored.derive_messages()
    assert list(repairer.repair(history).messages) == repair_pairing(list(history)).messages
