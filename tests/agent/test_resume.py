"""An agent on a session resumed from disk: pending input, header, context and crash repair."""

from __future__ import annotations

import asyncio
from pathlib import Path

from dsh_notebook.agent.agent import Agent
from dsh_notebook.agent.config import AgentConfig
from dsh_notebook.session.store import SessionStore
from dsh_notebook.tools.registry import ToolRegistry
from dsh_notebook.wire.events import RequestHeader, ToolResult, TurnEnd, UserMessageEvent
from dsh_notebook.wire.messages import user_text
from tests.session.helpers import die

from .fakes import ChunkModel, calls, sleep_tool, text


def agent_for(store: SessionStore, session_id: str, model: ChunkModel, *tools) -> Agent:
    session = store.get(session_id) or store.resume(session_id)
    return Agent(session, AgentConfig(model="fake:m1", retry_base_ms=1), adapter_for=lambda _m: model,
                 tools=ToolRegistry(tools), flush=lambda: store.flush(session_id))


async def test_resume_keeps_pending_input_context_and_logs_header_resume(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd="/tmp")
    first = agent_for(store, session.id, ChunkModel(text("one")))
    first.followup("hello")
    await first.wait_idle()
    first.inbox.followup(user_text("queued while shutting down"))  # pending, never started
    store.close(session.id)

    store2 = SessionStore(tmp_path)
    model = ChunkModel(text("two"))
    second = agent_for(store2, session.id, model)
    assert [i.text for i in second.inbox.items()] == ["queued while shutting down"]
    assert second.kick()
    await second.wait_idle()
    s = second.session
    assert [e.turn for e in s.events if isinstance(e, TurnEnd)] == [1, 2]
    assert [e.reason for e in s.events if isinstance(e, RequestHeader)] == ["initial", "resume"]
    snapshots = [e for e in s.events if isinstance(e, UserMessageEvent) and e.message.source.form == "snapshot"]
    assert len(snapshots) == 1  # the unchanged runtime context was not sent again after resume
    assert [m.role for m in model.requests[0].messages] == ["system", "user", "user", "assistant", "user"]


async def test_crash_mid_batch_is_repaired_on_resume_and_the_agent_continues(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = store.create(cwd="/tmp")
    started = asyncio.Event()
    crashed = agent_for(store, session.id, ChunkModel(calls(("c1", "sleep", '{"seconds": 30}'))), sleep_tool(started))
    crashed.followup("sleep")
    await started.wait()
    store.flush(session.id)  # what reached the disk before the "crash"
    driver = crashed._driver
    assert driver is not None
    # simulate the process dying: the on-disk log ends with an open tool call and an open turn
    die(store, session.id)
    store2 = SessionStore(tmp_path)
    model = ChunkModel(text("recovered"))
    resumed = agent_for(store2, session.id, model)
    repaired = [e for e in resumed.session.events if isinstance(e, ToolResult)]
    assert [r.error.code for r in repaired if r.error] == ["TOOL_OUTCOME_UNKNOWN"]
    resumed.followup("what happened?")
    await resumed.wait_idle()
    ends = [e.reason.kind for e in resumed.session.events if isinstance(e, TurnEnd)]
    assert ends == ["interrupted", "completed"]
    tool_msgs = [m for m in model.requests[0].messages if m.role == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0].is_error
    driver.cancel()
    await asyncio.wait({driver})
