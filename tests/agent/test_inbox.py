"""Inbox: routing, logged-before-applied splices, claim, steer during a turn, restore on resume."""

from __future__ import annotations

import asyncio

from dsh_notebook.agent.inbox import Inbox
from dsh_notebook.models.base import BlockStart, TextDelta
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import InboxSpliced, UserMessageEvent
from dsh_notebook.wire.messages import plugin_text, user_text

from .fakes import ChunkModel, Gate, make_agent, reload, text


def test_routing_and_wake() -> None:
    wakes: list[int] = []
    inbox = Inbox(Session("s"), wake=lambda: wakes.append(1))
    inbox.followup(user_text("later"))
    inbox.steer(user_text("now"))
    inbox.inject(plugin_text("ctx", plugin="p"))
    assert [p.message.content[0].text for p in inbox.next_turn] == ["later"]
    assert [p.message.content[0].text for p in inbox.next_step] == ["now", "ctx"]
    assert len(wakes) == 2  # inject does not wake
    assert [i.placement for i in inbox.items()] == ["steering", "context", "queued"]


def test_every_splice_is_logged_before_the_lists_change() -> None:
    session = Session("s")
    inbox = Inbox(session)
    seen: list[tuple[int, int]] = []

    def observer(event) -> None:
        if isinstance(event, InboxSpliced):
            seen.append((len(inbox.next_turn), len(inbox.next_step)))

    session.subscribe(observer)
    inbox.followup(user_text("a"))
    inbox.claim("next-turn", 1)
    assert seen == [(0, 0), (1, 0)]  # the observer saw the old state each time


def test_claim_takes_all_next_step_and_one_next_turn() -> None:
    session = Session("s")
    inbox = Inbox(session)
    for t in ("q1", "q2"):
        inbox.followup(user_text(t))
    inbox.steer(user_text("s1"))
    inbox.inject(user_text("i1"))
    claimed = inbox.claim("next-turn", 1)
    assert [m.content[0].text for m in claimed] == ["q1", "s1", "i1"]
    assert [p.message.content[0].text for p in inbox.next_turn] == ["q2"] and not inbox.next_step
    assert inbox.claim("next-step", 1) == []  # next-step target never takes a queued prompt
    claims = [e for e in session.events if isinstance(e, InboxSpliced) and e.outcome == "claimed"]
    assert [(c.target, c.removed_count) for c in claims] == [("next-turn", 1), ("next-step", 2)]


def test_splice_normalises_like_js() -> None:
    inbox = Inbox(Session("s"))
    inbox.followup(user_text("a"))
    inbox.followup(user_text("b"))
    removed = inbox.splice("next-turn", -1, 99)
    assert [p.message.content[0].text for p in removed] == ["b"]
    assert inbox.splice("next-turn", 5, 0) == []  # a no-op is not logged
    assert sum(isinstance(e, InboxSpliced) for e in inbox.session.events) == 3


def test_restore_replays_the_splices_with_stable_ids() -> None:
    session = Session("s")
    inbox = Inbox(session)
    inbox.followup(user_text("one"))
    inbox.followup(user_text("two"))
    inbox.inject(user_text("ctx"))
    inbox.claim("next-turn", 1)
    inbox.followup(user_text("three"))
    restored_session = reload(session)
    restored = Inbox.restore(restored_session)
    assert restored.items() == inbox.items()
    assert [i.text for i in restored.items()] == ["two", "three"]


async def test_steer_during_a_running_turn_rides_the_next_step() -> None:
    gate = Gate([BlockStart(0, "text"), TextDelta(0, "thinking")], after=[])
    model = ChunkModel(gate, text("steered answer"))
    agent = make_agent(model)
    agent.followup("start")
    await gate.reached.wait()
    agent.steer("actually, do X")
    gate.opened.set()
    await agent.wait_idle()
    s = agent.session
    assert sum(e.type == "turn/start" for e in s.events) == 1
    steered = next(e for e in s.events if isinstance(e, UserMessageEvent) and e.message.content[0].text == "actually, do X")
    assert steered.turn == 1
    assert model.requests[1].step == 2 and model.requests[1].messages[-1].content[0].text == "actually, do X"


async def test_inject_waits_for_something_else_to_wake() -> None:
    model = ChunkModel(text("reply"))
    agent = make_agent(model)
    agent.inject("background note")
    await asyncio.sleep(0.01)
    assert agent.status == "idle" and model.requests == []
    agent.followup("question")
    await agent.wait_idle()
    users = [m for m in model.requests[0].messages if getattr(m, "role", "") == "user"]
    assert users[0].source.kind == "plugin"  # the runtime context, before the step's input
    assert [m.content[0].text for m in users[1:3]] == ["question", "background note"]


async def test_pending_input_survives_resume() -> None:
    agent = make_agent(ChunkModel())
    agent.inbox.followup(user_text("queued before crash"))  # logged, driver not woken
    restored = reload(agent.session)
    model = ChunkModel(text("answer"))
    agent2 = make_agent(model, session=restored)
    assert [i.text for i in agent2.inbox.items()] == ["queued before crash"]
    assert agent2.kick() is True
    await agent2.wait_idle()
    assert model.requests and not agent2.inbox.has_pending
