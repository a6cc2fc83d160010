"""Crash repair of an interrupted turn, and the OpenAI Chat Completions wire form."""

from __future__ import annotations

from dsh_notebook.models.chat_format import to_openai_message, to_openai_messages
from dsh_notebook.session import close_interrupted_turn
from dsh_notebook.wire.events import (
    StepEnd,
    SystemMessageEvent,
    ToolCall,
    ToolResult,
    TurnEnd,
)
from dsh_notebook.wire.messages import (
    AssistantMessage,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    tool_text,
    user_text,
)
from tests.session.helpers import new_session, tool_turn
from tests.support.openai_validator import validate_chat_request


def test_closers_answer_calls_then_end_step_then_turn() -> None:
    s = new_session()
    tool_turn(s, 1, ["a"])
    tool_turn(s, 2, ["b1", "b2", "b3"], answer=False, end=False)
    call = s.append(ToolCall(turn=2, step=1, call_id="b1", name="read", arguments="{}"))
    s.append(ToolResult(turn=2, step=1, message=tool_text("b1", "done"), source_event_seqs=(call.seq,)))
    call2 = s.append(ToolCall(turn=2, step=1, call_id="b2", name="read", arguments="{}"))
    last_time = s.events[-1].time
    added = close_interrupted_turn(s)
    assert [e.type for e in added] == ["tool/result", "tool/result", "step/end", "turn/end"]
    unknown, not_started, step_end, turn_end = added
    assert isinstance(unknown, ToolResult) and unknown.error and not_started.error  # type: ignore[union-attr]
    assert (unknown.message.tool_call_id, unknown.error.code) == ("b2", "TOOL_OUTCOME_UNKNOWN")
    assert unknown.source_event_seqs == (call2.seq,) and unknown.message.is_error
    assert isinstance(not_started, ToolResult) and not_started.error is not None
    assert (not_started.message.tool_call_id, not_started.error.code) == ("b3", "TOOL_NOT_STARTED")
    assert not_started.source_event_seqs is None
    assert isinstance(step_end, StepEnd) and (step_end.turn, step_end.step) == (2, 1)
    assert isinstance(turn_end, TurnEnd) and turn_end.reason.kind == "interrupted"
    assert all(e.time == last_time for e in added)
    assert s.open_tool_calls() == {}
    validate_chat_request(to_openai_messages(s.derive_messages()))
    assert close_interrupted_turn(s) == []  # the turn is closed now


def test_closed_or_empty_logs_are_left_alone() -> None:
    s = new_session()
    assert close_interrupted_turn(s) == []
    tool_turn(s, 1, ["a"])
    n = len(s)
    assert close_interrupted_turn(s) == [] and len(s) == n


def test_turn_open_between_steps_gets_only_turn_end() -> None:
    s = new_session()
    tool_turn(s, 1, ["a"], end=False)
    s.append(StepEnd(turn=1, step=1))
    added = close_interrupted_turn(s)
    assert [e.type for e in added] == ["turn/end"]


def test_logged_call_without_an_assistant_block_is_answered() -> None:
    s = new_session()
    tool_turn(s, 1, [], end=False)
    call = s.append(ToolCall(turn=1, step=1, call_id="stray", name="bash", arguments="{}"))
    added = close_interrupted_turn(s)
    assert added[0].source_event_seqs == (call.seq,) and added[0].type == "tool/result"


def test_openai_form_of_each_role() -> None:
    msgs = [
        SystemMessage(content=(TextBlock(text="be brief"),)),
        user_text("read it"),
        AssistantMessage(
            content=(
                ReasoningBlock(text="think"),
                ToolCallBlock(id="c1", name="read", arguments='{"file_path":"a"}'),
            )
        ),
        tool_text("c1", "contents", is_error=True),
        AssistantMessage(content=(TextBlock(text="It "), TextBlock(text="says hi."))),
    ]
    out = to_openai_messages(msgs)
    assert out == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"file_path":"a"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "contents"},
        {"role": "assistant", "content": "It says hi."},
    ]
    validate_chat_request(out, allow_null_content=False)
    with_reasoning = to_openai_messages(msgs, include_reasoning=True)
    assert with_reasoning[2]["reasoning_content"] == "think"
    assert "reasoning_content" not in with_reasoning[4]


def test_conversion_is_cached_per_message_object() -> None:
    m = user_text("hello")
    assert to_openai_message(m) is to_openai_message(m)
    twin = user_text("hello")
    assert to_openai_message(twin) == to_openai_message(m)
    assert to_openai_message(m, include_reasoning=True) == {"role": "user", "content": "hello"}


def test_system_message_event_derives_and_converts() -> None:
    s = new_session()
    s.append(SystemMessageEvent(turn=1, step=1, message=SystemMessage(content=(TextBlock(text="sys"),))))
    s.append(SystemMessageEvent(turn=1, step=1, message=SystemMessage()))  # empty: skipped
    assert to_openai_messages(s.derive_messages()) == [{"role": "system", "content": "sys"}]
