"""Check that a saved session log is *valid*: it loads with every rule of a live append (dense
seqs, provenance, surface replaces), every tool call has exactly one result, every turn that
started ended, no repair is needed, and the messages of its next request pass the strict
OpenAI validator — from the file alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_notebook.models.chat_format import to_openai_messages
from dsh_notebook.session.persistence import load_log
from dsh_notebook.session.repair import PairingRepairer
from dsh_notebook.session.session import Session
from dsh_notebook.wire.events import AnyEvent, ToolCall, ToolResult, TurnEnd, TurnStart
from tests.support.openai_validator import validate_chat_request


def assert_valid_log(path: str | Path) -> list[AnyEvent]:
    loaded = load_log(path)
    assert not loaded.torn_tail and not loaded.warnings, loaded.warnings
    session = Session.restore(loaded.id, loaded.events, cwd=loaded.header.cwd, mark_seed=False)
    events = list(session.events)
    assert not session.open_tool_calls(), f"unanswered tool calls: {session.open_tool_calls()}"
    calls = [e.call_id for e in events if isinstance(e, ToolCall)]
    results = [e.message.tool_call_id for e in events if isinstance(e, ToolResult) and e.surface_op is None]
    assert sorted(calls) == sorted(results), (calls, results)
    starts = [e.turn for e in events if isinstance(e, TurnStart)]
    ends = [e.turn for e in events if isinstance(e, TurnEnd)]
    assert starts == ends, (starts, ends)
    repaired = PairingRepairer().repair(session.derive_messages())
    assert not repaired.changes, repaired.changes
    messages: Any = to_openai_messages(repaired.messages)
    if messages:
        validate_chat_request(messages)
    return events
