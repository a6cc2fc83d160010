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
