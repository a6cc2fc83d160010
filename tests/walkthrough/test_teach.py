"""``dsh_notebook.teach``: the printers the walkthrough notebooks use, on a real scripted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_notebook import teach
from dsh_notebook.agent.agent import Agent
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.models.scripted import ScriptedModel
from dsh_notebook.session.session import Session
from dsh_notebook.session.writer import SessionLog
from dsh_notebook.tools.registry import ToolRegistry, builtin_tools
from dsh_notebook.wire.events import AnyEvent, ToolCall, ToolResult
from dsh_notebook.wire.messages import AssistantMessage, ToolCallBlock, tool_text, user_text


@pytest.fixture
async def readme_events(tmp_path: Path) -> tuple[Path, list[AnyEvent]]:
    """The log of seed 000's run ("read README.md and summarise") on the embedded model."""
    session = Session("s_teach", cwd=str(copy_demo_workspace()))
    log = SessionLog(session, tmp_path / "s_teach.jsonl")
    agent = Agent(session, adapter_for=lambda m: ScriptedModel("readme", pace=0), model="script:readme",
                  tools=ToolRegistry(builtin_tools()), flush=log.flush)
    agent.followup("read README.md and summarise")
    await agent.wait_idle()
    log.close()
    return tmp_path / "s_teach.jsonl", list(session.events)


def test_load_events_reads_back_the_log(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    path, events = readme_events
    header, loaded = teach.load_events(path)
    assert header["id"] == "s_teach" and [e.seq for e in loaded] == [e.seq for e in events]


def test_filter_events_by_type_prefix_turn_and_tool(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    _, events = readme_events
    tools = teach.filter_events(events, types="tool/")
    assert [e.type for e in tools] == ["tool/call", "tool/result"]
    assert teach.filter_events(events, types="tool/", tool="bash") == []
    by_tool = teach.filter_events(events, tool="read")
    assert [e.type for e in by_tool] == ["assistant/message", "tool/call", "tool/result"]
    start = next(e.seq for e in events if e.type == "turn/start")   # the splice that queued the prompt precedes it
    assert [e.seq for e in teach.filter_events(events, turn=1)] == [e.seq for e in events[start:]]
    assert teach.filter_events(events, turn=2) == []
    assert [e.type for e in teach.filter_events(events, types=("turn/start", "turn/end"))] == ["turn/start", "turn/end"]


def test_provenance_links_call_and_result(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    _, events = readme_events
    p = teach.provenance(events, "c1")
    call = next(e for e in events if isinstance(e, ToolCall))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert p["tool/call"] == call.seq and p["tool/result"] == result.seq
    assert p["sourceEventSeqs"] == [call.seq] and p["assistant/message"] < call.seq and p["isError"] is False
    assert teach.provenance(events, "nope") == {"callId": "nope"}


def test_history_at_is_derive_messages_of_a_prefix(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    _, events = readme_events
    result = next(e for e in events if isinstance(e, ToolResult))
    before, after = teach.history_at(events, result.seq - 1), teach.history_at(events, result.seq)
    assert len(after) == len(before) + 1 and after.seqs[-1] == result.seq
    assert after[-1].role == "tool"
    whole = Session.restore("s_x", events, mark_seed=False).derive_messages()
    assert teach.history_at(events, events[-1].seq).seqs == whole.seqs


def test_request_diff_shows_what_the_next_request_adds(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    _, events = readme_events
    first, second = [e for e in events if e.type == "request/frozen"]
    d = teach.request_diff(events, first.seq, second.seq)
    added = [x["type"] for x in d["added"]]
    assert added == ["assistant/message", "tool/result"] and d["dropped"] == []
    assert d["after"]["messageSeqs"][: len(d["before"]["messageSeqs"])] == d["before"]["messageSeqs"]


def test_first_finds_by_type_and_fields(readme_events: tuple[Path, list[AnyEvent]]) -> None:
    _, events = readme_events
    assert teach.first(events, "tool/call", call_id="c1").name == "read"
    with pytest.raises(LookupError):
        teach.first(events, "tool/call", call_id="c9")


def test_message_line_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    asks = AssistantMessage(content=(ToolCallBlock(id="c1", name="read", arguments='{"file_path":"README.md"}'),))
    assert teach.message_line(asks) == 'assistant: [read · c1 · {"file_path":"README.md"}]'
    assert teach.message_line(tool_text("c1", "line 1\nline 2", is_error=True)) == "tool: toolCallId=c1 (error) line 1 ⏎ line 2"
    long = teach.message_line(user_text("x" * 200), width=40)
    assert len(long) == 40 and long.endswith("…")
    teach.messages_table([user_text("hi"), asks], [3, 5], roles=("assistant",))
    out = capsys.readouterr().out
    assert "seq    5" in out and "hi" not in out
    teach.side_by_side([user_text("a"), asks], [user_text("a")], width=30)
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("before") and len(rows) == 4 and all(len(r.split(" | ")[0]) == 30 for r in rows[2:])


def test_show_truncates_strings_lines_and_omits_keys(capsys: pytest.CaptureFixture[str]) -> None:
    teach.show({"a": "y" * 50, "stream": [1], "b": list(range(100))}, cut=10, max_lines=8, omit=("stream",))
    out = capsys.readouterr().out
    assert "y" * 10 + "… [40 more chars]" in out and "stream" not in out and "more lines]" in out
    teach.show(user_text("hi"))
    assert json.loads(capsys.readouterr().out)["content"] == [{"type": "text", "text": "hi"}]
