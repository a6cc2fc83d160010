"""Pairing repair at the API boundary (seed 003 third layer) and its incremental form."""

from __future__ import annotations

import pytest

from dsh_notebook.errors import SessionError
from dsh_notebook.models.chat_format import to_openai_messages
from dsh_notebook.session import PairingRepairer, repair_pairing
from dsh_notebook.session.repair import SYNTHETIC_RESULT_TEXT
from dsh_notebook.wire.events import ReplaceOp, UserMessageEvent
from dsh_notebook.wire.messages import (
    AnyMessage,
    AssistantMessage,
    ToolMessage,
    UserMessage,
    tool_text,
    user_text,
)
from tests.session.helpers import assistant, new_session, tool_turn
from tests.support.openai_validator import validate_chat_request


def shape(msgs: list[AnyMessage]) -> list[str]:
    out = []
    for m in msgs:
        if isinstance(m, ToolMessage):
            out.append(f"tool:{m.tool_call_id}{'!' if m.is_error else ''}")
        elif isinstance(m, AssistantMessage):
            out.append("assistant:" + ",".join(c.id for c in m.tool_calls))
        else:
            out.append(m.role)
    return out


def ok(cid: str) -> ToolMessage:
    return tool_text(cid, f"result {cid}")


def check_valid(msgs: list[AnyMessage]) -> None:
    validate_chat_request(to_openai_messages(msgs))


def test_valid_history_is_unchanged() -> None:
    msgs = [user_text("hi"), assistant("a", "b"), ok("a"), ok("b"), assistant(text="done")]
    r = repair_pairing(msgs)
    assert r.messages == msgs and r.changes == [] and not r.changed


def test_synthetic_results_follow_the_batch_existing_results_in_call_order() -> None:
    msgs = [user_text("go"), assistant("c1", "c2", "c3"), ok("c2"), user_text("next")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:c1,c2,c3", "tool:c2", "tool:c1!", "tool:c3!", "user"]
    syn = r.messages[3]
    assert isinstance(syn, ToolMessage) and syn.text == SYNTHETIC_RESULT_TEXT and syn.is_error
    assert [(c.kind, c.call_id, c.index) for c in r.changes] == [
        ("synthetic-result", "c1", 1),
        ("synthetic-result", "c3", 1),
    ]
    check_valid(r.messages)


def test_open_batch_at_the_end_is_answered() -> None:
    r = repair_pairing([user_text("go"), assistant("c1")])
    assert shape(r.messages) == ["user", "assistant:c1", "tool:c1!"]


def test_result_whose_call_does_not_precede_it_is_dropped() -> None:
    msgs = [user_text("go"), assistant("a"), ok("a"), ok("zzz"), user_text("more"), ok("b"), assistant("b")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:a", "tool:a", "user", "assistant:b", "tool:b!"]
    assert [(c.kind, c.call_id, c.index) for c in r.changes] == [
        ("dropped-orphan", "zzz", 3),
        ("dropped-orphan", "b", 5),
        ("synthetic-result", "b", 6),
    ]
    check_valid(r.messages)


def test_leading_orphans_are_stripped() -> None:
    msgs = [ok("old1"), user_text("summary"), ok("old2"), assistant(text="hello")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:"]
    assert [c.kind for c in r.changes] == ["stripped-leading-orphan"] * 2


def test_duplicate_result_is_dropped() -> None:
    msgs = [user_text("go"), assistant("a"), ok("a"), ok("a"), user_text("x"), ok("a")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:a", "tool:a", "user"]
    assert [c.kind for c in r.changes] == ["dropped-duplicate", "dropped-duplicate"]


def test_late_result_is_dropped_and_its_call_answered_in_its_batch() -> None:
    msgs = [user_text("go"), assistant("a"), user_text("steer"), ok("a")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:a", "tool:a!", "user"]
    assert [c.kind for c in r.changes] == ["synthetic-result", "dropped-late-result"]


def test_duplicate_call_ids_across_messages_are_renamed_with_their_results() -> None:
    msgs = [user_text("go"), assistant("call_0"), ok("call_0"), assistant("call_0"), ok("call_0")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:call_0", "tool:call_0", "assistant:call_0_dup2", "tool:call_0_dup2"]
    assert [(c.kind, c.call_id, c.index) for c in r.changes] == [("renamed-duplicate-call", "call_0", 3)]
    assert msgs[3].tool_calls[0].id == "call_0"  # type: ignore[union-attr]  # input untouched
    check_valid(r.messages)


def test_duplicate_ids_inside_one_message_pair_positionally() -> None:
    msgs = [user_text("go"), assistant("x", "x"), tool_text("x", "first"), tool_text("x", "second")]
    r = repair_pairing(msgs)
    assert shape(r.messages) == ["user", "assistant:x,x_dup2", "tool:x", "tool:x_dup2"]
    assert [m.text for m in r.messages[2:]] == ["first", "second"]  # type: ignore[union-attr]
    check_valid(r.messages)


def test_empty_call_id_gets_a_fresh_one() -> None:
    r = repair_pairing([user_text("go"), assistant("")])
    assert shape(r.messages) == ["user", "assistant:call_dup2", "tool:call_dup2!"]
    check_valid(r.messages)


def test_strict_mode_raises_instead_of_repairing() -> None:
    with pytest.raises(SessionError) as err:
        repair_pairing([user_text("go"), assistant("c1")], strict=True)
    assert err.value.code == "UNPAIRED_TOOL_CALLS" and "c1" in err.value.message
    good = [user_text("go"), assistant("c1"), ok("c1")]
    assert repair_pairing(good, strict=True).messages == good


def test_repair_is_idempotent_and_reports_changes_as_dicts() -> None:
    msgs = [ok("z"), user_text("go"), assistant("a", "a", "b"), ok("b"), ok("q"), user_text("u"), assistant("b")]
    once = repair_pairing(msgs)
    twice = repair_pairing(once.messages)
    assert twice.messages == once.messages and twice.changes == []
    assert {d["kind"] for d in (c.to_dict() for c in once.changes)} >= {
        "stripped-leading-orphan", "renamed-duplicate-call", "synthetic-result", "dropped-orphan",
    }  # fmt: skip
    assert set(once.changes[0].to_dict()) == {"kind", "callId", "index", "detail"}
    check_valid(once.messages)


def test_incremental_repairer_matches_full_pass_and_reuses_work() -> None:
    s = new_session()
    repairer = PairingRepairer()
    for turn in range(1, 6):
        tool_turn(s, turn, [f"c{turn}", "dup"], answer=turn != 3)
        history = s.derive_messages()
        inc = repairer.repair(history)
        full = repair_pairing(list(history))
        assert list(inc.messages) == full.messages and inc.changes == full.changes
        assert [x for x in inc.seqs or () if x >= 0] == history.seqs
        assert inc.message_seqs == history.seqs
    assert repairer.full_passes == 1


def test_incremental_repairer_replaces_a_synthetic_tail_when_results_arrive() -> None:
    s = new_session()
    tool_turn(s, 1, ["c1"], answer=False, end=False)
    repairer = PairingRepairer()
    first = repairer.repair(s.derive_messages())
    assert shape(list(first.messages))[-1] == "tool:c1!"
    from dsh_notebook.wire.events import ToolCall, ToolResult

    call = s.append(ToolCall(turn=1, step=1, call_id="c1", name="read", arguments="{}"))
    s.append(ToolResult(turn=1, step=1, message=ok("c1"), source_event_seqs=(call.seq,)))
    second = repairer.repair(s.derive_messages())
    assert shape(list(second.messages)) == ["user", "assistant:c1", "tool:c1"] and not second.changed
    assert shape(list(first.messages))[-1] == "tool:c1!"  # an earlier result is not altered


def test_incremental_repairer_starts_over_after_a_replace() -> None:
    s = new_session()
    a = s.append(UserMessageEvent(message=user_text("one")))
    repairer = PairingRepairer()
    repairer.repair(s.derive_messages())
    s.append(
        UserMessageEvent(
            message=user_text("two"), surface_op=ReplaceOp(start_seq=a.seq, end_seq=a.seq),
            source_event_seqs=(a.seq,),
        )
    )  # fmt: skip
    r = repairer.repair(s.derive_messages())
    assert repairer.full_passes == 2
    assert [m.content[0].text for m in r.messages if isinstance(m, UserMessage)] == ["two"]
