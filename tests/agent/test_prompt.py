"""PromptAssembly from a Scope, strict rendering, and the two projections."""

from __future__ import annotations

import pytest

from dsh_notebook.agent.prompt import (
    CLEARED,
    NamedText,
    PromptEnv,
    RuntimeContextProjection,
    SystemPromptProjection,
    collect_assembly,
    render_prompt,
)
from dsh_notebook.context import HarnessContext
from dsh_notebook.errors import UserError
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import ReplaceOp, SystemMessageEvent, UserMessageEvent
from dsh_notebook.wire.messages import user_text

from .fakes import reload

ENV = PromptEnv(provider="deepseek", model="deepseek-chat", cwd="/w")


def test_render_is_strict() -> None:
    assert render_prompt("on {{provider}}:{{ model }}", {"provider": "p", "model": "m"}) == "on p:m"
    with pytest.raises(UserError) as e:
        render_prompt("{{nope}}", {})
    assert e.value.code == "PROMPT_UNKNOWN_VARIABLE"
    with pytest.raises(UserError) as e:
        render_prompt("{{x}}", {"x": None})
    assert e.value.code == "PROMPT_UNDEFINED_VARIABLE"
    assert render_prompt("a lone {{ and {{Not-A-Name}}", {}) == "a lone {{ and {{Not-A-Name}}"
    assert render_prompt("{{a}}", {"a": "{{b}}", "b": "X"}) == "{{b}}"  # no rescanning


def test_scope_shadows_global_shadows_builtin() -> None:
    root = HarnessContext("host")
    root.section("persona", 0, "global persona")
    root.section("harness:identity", -100, "custom identity for {{model}}")
    agent_ctx = root.child("agent:s1")
    agent_ctx.section("persona", 0, "agent persona")
    agent_ctx.context("todo", 50, lambda env: f"todo in {env.cwd}")
    agent_ctx.variable("team", lambda env: "blue")
    agent_ctx.section("team", 5, "team {{team}}")
    asm = collect_assembly(agent_ctx.scope(), ENV)
    assert [s.name for s in asm.sections] == ["harness:identity", "persona", "team", "harness:tool-guidance"]
    system = asm.render_system()
    assert system.startswith("custom identity for deepseek-chat\n\nagent persona\n\nteam blue")
    assert "global persona" not in system
    assert [c.name for c in asm.contexts] == ["cwd", "date", "model", "todo"]
    assert asm.rendered_contexts()[-1].text == "todo in /w"
    # a sibling agent does not see agent:s1's contributions
    other = collect_assembly(root.child("agent:s2").scope(), ENV)
    assert "global persona" in other.render_system()


def test_runtime_context_snapshot_only_on_change_and_cleared_marker() -> None:
    session = Session("s")
    proj = RuntimeContextProjection(session)
    assert proj.project([]) is None  # never had one, nothing now
    first = proj.project([NamedText("cwd", "Working directory: /a")])
    assert first is not None and first.source.form == "snapshot"
    proj.committed(session.append(UserMessageEvent(message=first)))
    assert proj.project([NamedText("cwd", "Working directory: /a")]) is None
    changed = proj.project([NamedText("cwd", "Working directory: /b")])
    assert changed is not None and "/b" in changed.content[0].text
    proj.committed(session.append(UserMessageEvent(message=changed)))
    cleared = proj.project([])
    assert cleared is not None and cleared.content[0].text == CLEARED
    # restored from the session on resume: no duplicate of the retained snapshot
    again = RuntimeContextProjection(reload(session))
    assert again.project([NamedText("cwd", "Working directory: /b")]) is None


def test_runtime_context_resends_after_its_snapshot_was_shadowed() -> None:
    session = Session("s")
    proj = RuntimeContextProjection(session)
    snap = proj.project([NamedText("x", "X")])
    ev = session.append(UserMessageEvent(message=snap))
    proj.committed(ev)
    session.append(UserMessageEvent(message=user_text("summary"), surface_op=ReplaceOp(start_seq=ev.seq, end_seq=ev.seq),
                                    source_event_seqs=(ev.seq,)))
    assert proj.project([NamedText("x", "X")]) is not None


def system_events(session: Session) -> list[SystemMessageEvent]:
    return [e for e in session.events if isinstance(e, SystemMessageEvent)]


def test_system_prompt_projection_ops() -> None:
    session = Session("s")
    proj = SystemPromptProjection(session)
    assert proj.project("v1", turn=1, step=1) == "append"
    assert proj.project("v1", turn=1, step=2) == "unchanged"
    session.append(UserMessageEvent(message=user_text("hi")))
    assert proj.project("v2", turn=2, step=1) == "replace"
    head, replaced = system_events(session)
    assert replaced.surface_op == ReplaceOp(start_seq=head.seq, end_seq=head.seq)
    assert replaced.source_event_seqs == (head.seq,)
    msgs = session.derive_messages()
    assert msgs[0].content[0].text == "v2" and len(msgs) == 2  # still node 0, before the user message
    assert proj.project("", turn=2, step=2) == "clear"
    assert system_events(session)[-1].message.content == ()
    assert [m.role for m in session.derive_messages()] == ["user"]


def test_system_prompt_in_history_appends_changes() -> None:
    session = Session("s")
    proj = SystemPromptProjection(session, in_history=True)
    proj.project("v1", turn=1, step=1)
    session.append(UserMessageEvent(message=user_text("hi")))
    assert proj.project("v2", turn=1, step=2) == "append"
    assert [m.role for m in session.derive_messages()] == ["system", "user", "system"]
    # a new series normalises: later nodes cleared, head replaced
    assert proj.project("v3", turn=2, step=1, starts_series=True) == "replace"
    assert [m.content[0].text for m in session.derive_messages() if m.role == "system"] == ["v3"]
