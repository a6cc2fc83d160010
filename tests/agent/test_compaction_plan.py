"""Which surface nodes a compaction replaces: never a system node, never a split tool-call pair,
the kept turn whole — and the estimate it is decided by."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_notebook.agent.compaction import commit_compaction, estimate_tokens, plan_compaction
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import (
    AssistantMessageEvent,
    SystemMessageEvent,
    ToolCall,
    ToolResult,
    UserMessageEvent,
)
from dsh_notebook.wire.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.session.helpers import assistant, new_session


def _tool_step(session: Session, call_id: str, turn: int, step: int) -> None:
    session.append(AssistantMessageEvent(turn=turn, step=step, message=assistant(call_id)))
    call = session.append(ToolCall(turn=turn, step=step, call_id=call_id, name="read", arguments="{}"))
    session.append(ToolResult(turn=turn, step=step, message=tool_text(call_id, "result"), source_event_seqs=(call.seq,)))


def _session_with_turns(shape: list[int]) -> Session:
    """A session: a system node, then one turn per entry with that many tool-call steps."""
    session = new_session()
    session.append(SystemMessageEvent(turn=1, step=1, message=SystemMessage(content=(TextBlock(text="sys"),))))
    n = 0
    for turn, steps in enumerate(shape, start=1):
        session.append(UserMessageEvent(turn=turn, message=user_text(f"prompt {turn}")))
        for step in range(1, steps + 1):
            n += 1
            _tool_step(session, f"c{n}", turn, step)
        session.append(AssistantMessageEvent(turn=turn, step=steps + 1,
                                             message=AssistantMessage(content=(TextBlock(text=f"answer {turn}"),))))
    return session


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=5))
def test_a_plan_never_splits_a_pair_never_takes_the_system_node_and_keeps_the_current_turn(shape: list[int]) -> None:
    session = _session_with_turns(shape)
    last = len(shape)
    plan = plan_compaction(session, last)
    if plan is None:
        assert len(shape) == 1 and shape[0] == 0  # a lone prompt and answer: nothing worth replacing
        return
    events = session.events
    nodes = session.surface
    assert not any(isinstance(events[s], SystemMessageEvent) for s in plan.seqs)
    i, j = nodes.index(plan.start_seq), nodes.index(plan.end_seq)
    assert list(plan.seqs) == nodes[i : j + 1]  # contiguous surface nodes
    calls = {c.id for s in plan.seqs if isinstance(events[s], AssistantMessageEvent) for c in events[s].message.tool_calls}
    answered = {events[s].message.tool_call_id for s in plan.seqs if isinstance(events[s], ToolResult)}
    assert calls == answered  # every pair is wholly inside or wholly outside
    if len(shape) > 1:
        assert all(getattr(events[s], "turn", None) != last for s in plan.seqs)  # the current turn is kept


def test_the_estimate_is_chars_over_four_plus_overhead() -> None:
    short = estimate_tokens([user_text("x" * 400)])
    assert short == 100 + 4 + 3
    call = AssistantMessage(content=(ToolCallBlock(id="c1", name="read", arguments='{"file_path": "a"}'),))
    assert estimate_tokens([user_text("x" * 400), call]) > short


def test_a_transcript_over_its_cap_keeps_the_head_and_the_tail() -> None:
    from dsh_notebook.agent.compaction import transcript

    messages = [user_text(f"goal {i} " + "x" * 300) for i in range(40)]
    whole = transcript(messages)
    capped = transcript(messages, max_chars=3000)
    assert len(capped) < 3200 < len(whole)
    assert capped.startswith("[user]\ngoal 0 ") and capped.endswith(whole[-100:])
    assert "characters of the conversation left out" in capped
    assert "… [" in transcript([user_text("y" * 5000)], clip=100)  # one long message is clipped


def test_a_long_running_turn_compacts_again_inside_itself_after_its_first_summary() -> None:
    """One long turn, compacted once (a summary now heads it): the running turn can be compacted
    again up to its last exchange — else a tool loop fills the window and the request cannot be
    sent (found on the real local model: CONTEXT_OVERFLOW naming the summary at step 37)."""
    session = _session_with_turns([6])
    first = plan_compaction(session, 1, running=True)
    assert first is not None
    commit_compaction(session, first, "summary of steps 1-5", turn=1, trigger="threshold", tokens_before=900,
                      tokens_after=100, window=4096, provider="fake", model="m", usage=None)
    for step in range(7, 13):
        _tool_step(session, f"d{step}", 1, step)
    again = plan_compaction(session, 1, running=True)
    assert again is not None and any(isinstance(session.events[s], AssistantMessageEvent) for s in again.seqs)
    # not the running turn (a manual compact keeping the last turn): the lone summary stays as it is
    assert plan_compaction(session, 1) is None
