"""The running character totals behind the token estimate: a step pays for its new messages only,
and a surface replace (a compaction) starts the totals again."""

from __future__ import annotations

from dsh_notebook.agent.compaction import estimate_tokens
from dsh_notebook.session.history import message_chars
from dsh_notebook.wire.events import ReplaceOp, UserMessageEvent
from dsh_notebook.wire.messages import user_text
from tests.session.helpers import assistant, new_session


def test_chars_of_a_history_follow_appends_and_a_replace() -> None:
    s = new_session()
    a = s.append(UserMessageEvent(message=user_text("one")))
    early = s.derive_messages()
    assert early.chars() == 3
    s.append(UserMessageEvent(message=user_text("three")))
    b = s.append(UserMessageEvent(message=user_text("fifteen letters")))
    late = s.derive_messages()
    assert late.chars() == 3 + 5 + 15 == sum(message_chars(m) for m in late)
    assert early.chars() == 3  # an older snapshot keeps its own total
    s.append(UserMessageEvent(message=user_text("sum"), surface_op=ReplaceOp(start_seq=a.seq, end_seq=b.seq),
                              source_event_seqs=(0, 1, 2)))
    replaced = s.derive_messages()
    assert replaced.chars() == 3 and late.chars() == 23
    assert estimate_tokens(replaced) == estimate_tokens(list(replaced))


def test_estimate_of_a_history_equals_the_estimate_of_its_messages() -> None:
    s = new_session()
    for k in range(5):
        s.append(UserMessageEvent(message=user_text(f"message {k} " * k)))
    pending = [assistant("c1", text="thinking")]
    history = s.derive_messages()
    assert estimate_tokens(history, pending=pending) == estimate_tokens([*history, *pending])
    assert estimate_tokens(history[2:]) == estimate_tokens(list(history)[2:])


def test_the_prompt_estimate_starts_from_the_last_reported_usage_until_a_replace() -> None:
    from dsh_notebook.agent.fit import estimate_prompt
    from dsh_notebook.wire.events import AssistantMessageEvent, Usage

    s = new_session()
    a = s.append(UserMessageEvent(message=user_text("hello there")))
    done = s.append(AssistantMessageEvent(turn=1, step=1, message=assistant(text="hi"), usage=Usage(input_tokens=500, output_tokens=2)))
    s.append(AssistantMessageEvent(turn=1, step=2, message=assistant(text="cut"), usage=Usage(input_tokens=9, output_tokens=1),
                                   interrupted=True))  # an interrupted answer is no anchor
    s.append(UserMessageEvent(message=user_text("more")))
    assert (s.last_usage_seq, s.last_reshape_seq) == (done.seq, None)
    history = s.derive_messages()
    assert estimate_prompt(s, history) == 500 + estimate_tokens(history[1:])
    s.append(UserMessageEvent(message=user_text("sum"), surface_op=ReplaceOp(start_seq=a.seq, end_seq=done.seq),
                              source_event_seqs=(a.seq, done.seq)))
    history = s.derive_messages()
    assert s.last_reshape_seq == len(s) - 1 and estimate_prompt(s, history) == estimate_tokens(history)
