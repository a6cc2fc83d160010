"""PromptAssembly from a Scope, strict rendering, and the two projections."""

from __future__ import annotations

from typing import Any

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


# -- issue 39 items 1 and 2: exactly the tools asked for; the prompt last --------------------------


def _scope_tool(name: str) -> Any:
    from dsh_notebook.tools.base import Tool

    from .fakes import EchoArgs

    async def run(args: Any, ctx: Any) -> Any:
        raise AssertionError("never called")

    return Tool(name, f"the {name} tool", EchoArgs, run)


async def test_a_turn_offers_exactly_its_tools_the_scopes_included_and_ends_with_the_prompt() -> None:
    """``--tools none`` is a plain chat turn even where a Scope contributes tools (a notebook's
    ``python`` …): no tool definitions, no word of tools in the system prompt; ``--tools read,python``
    offers those two, the scope's among them. Every request's last message is the prompt, the
    runtime context before it."""
    from dsh_notebook.agent.config import AgentConfig
    from dsh_notebook.tools.registry import ToolRegistry, builtin_tools

    from .fakes import ChunkModel, make_agent, text

    model = ChunkModel(text("plain"), text("with tools"))
    root = HarnessContext("host")
    root.tool(_scope_tool("python"))
    root.tool(_scope_tool("notebook_read"))
    agent = make_agent(model, context=root)
    agent.toolset.registry = ToolRegistry(builtin_tools())
    agent.config = AgentConfig(model="fake:m1", tools=())
    agent.followup("Say hello in five words.")
    await agent.wait_idle()
    plain = model.requests[0]
    assert plain.tools == ()
    assert "Act through the tools" not in plain.messages[0].content[0].text  # the system prompt
    assert [m.role for m in plain.messages] == ["system", "user", "user"]
    assert plain.messages[1].source.kind == "plugin" and "Today's date" in plain.messages[1].content[0].text
    assert plain.messages[-1].content[0].text == "Say hello in five words."
    agent.config = AgentConfig(model="fake:m1", tools=("read", "python"))
    agent.followup("Now read something.")
    await agent.wait_idle()
    second = model.requests[1]
    assert sorted(t.name for t in second.tools) == ["python", "read"]
    assert "Act through the tools" in second.messages[0].content[0].text
    assert second.messages[-1].content[0].text == "Now read something."


def test_an_unknown_tool_name_is_bad_tools_naming_it_and_the_tools_there() -> None:
    from dsh_notebook.agent.toolset import check_tool_names

    root = HarnessContext("host")
    root.tool(_scope_tool("python"))
    check_tool_names(("read", "python"), root)  # a scope's tool is a tool here
    check_tool_names((), root)
    check_tool_names(None, root)
    with pytest.raises(UserError) as caught:
        check_tool_names(("read", "pyhton", "gerp"), root)
    said = caught.value.message
    assert caught.value.code == "BAD_TOOLS" and "'pyhton', 'gerp'" in said
    assert "bash, edit, glob, grep, python, read, write" in said
    # an MCP server's tools are known only once it starts: any SERVER__TOOL name of an enabled one
    from types import SimpleNamespace

    spec = SimpleNamespace(disabled=False)
    root.provide("mcp", SimpleNamespace(prefixes={"fs": "fs", "off": "off"},
                                        servers={"fs": SimpleNamespace(spec=spec),
                                                 "off": SimpleNamespace(spec=SimpleNamespace(disabled=True))}))
    check_tool_names(("fs__read_file",), root)
    for bad in ("off__x", "fs__", "gh__issues"):
        with pytest.raises(UserError) as caught:
            check_tool_names((bad,), root)
        assert caught.value.code == "BAD_TOOLS" and "MCP tools as fs__TOOL" in caught.value.message


async def test_a_log_whose_snapshot_trails_its_prompt_reads_and_goes_on() -> None:
    """Logs written before the context moved (the snapshot after the prompt) load, resume and go on:
    the retained snapshot is not sent again, and the new turn's request ends with its prompt."""
    from .fakes import ChunkModel, make_agent, text

    first = ChunkModel(text("one"))
    agent = make_agent(first)
    agent.followup("first question")
    await agent.wait_idle()
    snapshot = first.requests[0].messages[1]
    old = Session("s_old", cwd="/tmp")  # the same facts in the older order: prompt, then snapshot
    old.append(SystemMessageEvent(turn=1, step=1, message=first.requests[0].messages[0]))
    old.append(UserMessageEvent(turn=1, message=first.requests[0].messages[2]))
    old.append(UserMessageEvent(turn=1, message=snapshot))
    second = ChunkModel(text("two"))
    resumed = make_agent(second, session=reload(old))
    resumed.followup("second question")
    await resumed.wait_idle()
    sent = second.requests[0].messages
    assert [m.role for m in sent] == ["system", "user", "user", "user"]
    assert sent[1].content[0].text == "first question" and sent[2].source.kind == "plugin"
    assert sent[-1].content[0].text == "second question"  # no snapshot again: it did not change


# -- issue 39 items 2–3: a small model's plain chat turn gets the compact prompt -------------------


def test_the_compact_prompt_puts_the_runtime_context_in_the_system_prompt_and_a_scope_still_wins() -> None:
    """The compact assembly: the short identity, no tool guidance, the context lines last in the
    system prompt (the working directory after the date and the model) and no context of its own
    to project; a scope's own identity and contexts are kept."""
    from dsh_notebook.agent.prompt import COMPACT_IDENTITY

    env = PromptEnv(provider="local", model="smollm2", cwd="/w")
    asm = collect_assembly(None, env, offered=(), compact=True)
    assert asm.contexts_in_system and asm.contexts == () and asm.rendered_contexts() == []
    system = asm.render_system()
    head, lines = system.split("\n\n")
    assert head == COMPACT_IDENTITY and "notebook" not in system and "Act through the tools" not in system
    assert [line.split(":")[0] for line in lines.splitlines()] == ["Today's date", "Model", "Working directory"]
    assert lines.splitlines()[1:] == ["Model: local:smollm2", "Working directory: /w"]
    root = HarnessContext("host")
    root.section("harness:identity", -100, "custom identity for {{model}}")
    root.context("todo", 50, lambda env: f"todo in {env.cwd}")
    scoped = collect_assembly(root.scope(), env, offered=(), compact=True).render_system()
    assert scoped.startswith("custom identity for smollm2\n\n") and scoped.endswith("\ntodo in /w")
    full = collect_assembly(None, env, offered=())
    assert not full.contexts_in_system and [c.name for c in full.contexts] == ["cwd", "date", "model"]


def test_only_a_small_named_local_model_gets_the_compact_prompt() -> None:
    from dsh_notebook.models.routing import compact_prompt

    assert compact_prompt("local:smollm2") and compact_prompt("local:SmolLM2")
    assert not compact_prompt("local:/models/qwen.gguf")  # a GGUF of unknown size: the full prompt
    assert not compact_prompt("deepseek:deepseek-chat") and not compact_prompt("script:auto")
    assert not compact_prompt("not a model id")


async def test_a_small_models_plain_chat_turn_is_system_then_prompt_and_a_turn_with_tools_is_not() -> None:
    """``local:smollm2`` with ``--tools none``: the request is the compact system prompt (runtime
    context inside) and the prompt — no context message, no ``CLEARED`` marker when a turn with
    tools sent one before; a turn with tools gets the full prompt and the context message."""
    from dsh_notebook.agent.config import AgentConfig
    from dsh_notebook.agent.prompt import COMPACT_IDENTITY
    from dsh_notebook.tools.registry import ToolRegistry, builtin_tools

    from .fakes import ChunkModel, make_agent, text

    model = ChunkModel(text("hi"), text("read"), text("hi again"))
    agent = make_agent(model, cwd="/w")
    agent.toolset.registry = ToolRegistry(builtin_tools())
    agent.config = AgentConfig(model="local:smollm2", tools=())
    agent.followup("Say hello in five words.")
    await agent.wait_idle()
    plain = model.requests[0]
    assert [m.role for m in plain.messages] == ["system", "user"]
    system = plain.messages[0].content[0].text
    assert system.startswith(COMPACT_IDENTITY + "\n\nToday's date: ") and system.endswith("Working directory: /w")
    assert plain.messages[-1].source.kind == "user" and plain.messages[-1].content[0].text == "Say hello in five words."
    agent.config = AgentConfig(model="local:smollm2", tools=("read",))
    agent.followup("Now read something.")
    await agent.wait_idle()
    tools_turn = model.requests[1]
    assert "Act through the tools" in tools_turn.messages[0].content[0].text
    snapshot, prompt = tools_turn.messages[-2:]
    assert snapshot.source.kind == "plugin" and "Today's date" in snapshot.content[0].text
    assert prompt.content[0].text == "Now read something."
    agent.config = AgentConfig(model="local:smollm2", tools=())
    agent.followup("Bye.")
    await agent.wait_idle()
    again = model.requests[2]
    assert again.messages[0].content[0].text.startswith(COMPACT_IDENTITY)
    assert again.messages[-1].content[0].text == "Bye."
    assert not any(CLEARED in m.content[0].text for m in again.messages if m.role == "user")
    assert len(again.messages) == len(tools_turn.messages) + 2  # the answer and the prompt, nothing else
