"""Issue 41: external calls are session events like any other — typed, read back from a saved log,
in the stats' turns, and in the OpenTelemetry export as GenAI ``execute_tool`` spans naming the
client (a real OTLP/HTTP receiver on loopback); the progress a long call sends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.observe.otel import export_session
from dsh_notebook.session.persistence import load_log
from dsh_notebook.testing import LogBuilder
from dsh_notebook.wire import events as ev
from dsh_notebook.wire.external import ExternalBeginArgs
from tests.support.otlp_receiver import OTLPReceiver

CLIENT = ev.ExternalClient(name="claude-code", version="2.1.0")


def external_log(path: Path) -> list[ev.AnyEvent]:
    """A read outside any turn, then an external turn of one execute_code call."""
    with LogBuilder("s_ext", path=path) as b:
        call = b.append(ev.ExternalCall(call_id="x1", tool="read_notebook", arguments='{"path": "a.ipynb"}',
                                        client=CLIENT, mcp_session_id="m1", notebook="a.ipynb"))
        b.append(ev.ExternalResult(call_id="x1", tool="read_notebook", source_event_seqs=(call.seq,),
                                   content=(ev.ExternalContent(type="text", text="cells"),
                                            ev.ExternalContent(type="image", mime_type="image/png", bytes=68))))
        b.append(ev.TurnStart(turn=1))
        call = b.append(ev.ExternalCall(call_id="x2", tool="execute_code", arguments='{"code": "1/0"}', client=CLIENT,
                                        mcp_session_id="m1", notebook="a.ipynb", turn=1))
        b.append(ev.ApprovalDecided(call_id="x2", name="execute_code", decision="allow", by="mode", mode="auto",
                                    decider="mode"))
        b.append(ev.ExternalResult(call_id="x2", tool="execute_code", turn=1, is_error=True, source_event_seqs=(call.seq,),
                                   error=ev.ErrorInfo(code="PYTHON_ERROR", message="ZeroDivisionError"),
                                   meta={"executionCount": 3}))
        b.append(ev.TurnEnd(turn=1, reason=ev.TurnEndReason(kind="completed")))
    return list(load_log(path).events)


def test_external_events_round_trip_through_a_saved_log_and_fold_into_the_stats(tmp_path: Path) -> None:
    events = external_log(tmp_path / "s_ext.jsonl")
    assert [e.type for e in events] == ["external/call", "external/result", "turn/start", "external/call",
                                        "approval/decided", "external/result", "turn/end"]
    assert events[1].content[1].bytes == 68 and events[1].content[1].text is None  # an image: described only
    line = json.loads((tmp_path / "s_ext.jsonl").read_text().splitlines()[2])
    assert line["sourceEventSeqs"] == [0] and line["content"][1] == {"type": "image", "mimeType": "image/png", "bytes": 68}
    stats = session_stats(events)
    assert [t.turn for t in stats.turns] == [1] and stats.turns[0].reason == "completed"


def test_otel_export_sends_execute_tool_spans_naming_the_external_client(tmp_path: Path) -> None:
    events = external_log(tmp_path / "s_ext.jsonl")
    with OTLPReceiver() as receiver:
        sent = export_session("s_ext", events, endpoint=receiver.endpoint + "/v1/traces")
    spans = {s.name: s for s in receiver.spans}
    assert sent == 3 and set(spans) == {"invoke_agent dsh", "execute_tool read_notebook", "execute_tool execute_code"}
    read, run, turn = spans["execute_tool read_notebook"], spans["execute_tool execute_code"], spans["invoke_agent dsh"]
    assert read.parent_id == b"" and run.parent_id == turn.span_id
    for span, call in ((read, "x1"), (run, "x2")):
        a = span.attributes
        assert (a["gen_ai.operation.name"], a["gen_ai.agent.name"], a["gen_ai.tool.call.id"]) == (
            "execute_tool", "claude-code", call)
        assert a["dsh.external.client.version"] == "2.1.0" and a["dsh.external.mcp_session_id"] == "m1"
    assert run.attributes["error.type"] == "PYTHON_ERROR" and "error.type" not in read.attributes
    assert "gen_ai.tool.call.arguments" not in run.attributes  # content only on opt-in


def test_external_begin_args_are_closed_and_checked() -> None:
    ok = ExternalBeginArgs.model_validate({"sessionId": "s", "callId": "x1", "tool": "execute_code", "arguments": "{}",
                                           "client": {"name": "c"}})
    assert ok.tool == "execute_code"
    for bad in ({"tool": "rm_rf"}, {"callId": "../x"}, {"extra": 1}):
        with pytest.raises(ValueError):
            ExternalBeginArgs.model_validate({"sessionId": "s", "callId": "x1", "tool": "execute_code",
                                              "arguments": "{}", "client": {"name": "c"}, **bad})


async def test_progress_is_at_most_one_a_second_with_a_heartbeat_when_nothing_changes() -> None:
    from dsh_notebook.external.calls import Progress

    sent: list[tuple[float, str]] = []
    four = asyncio.Event()

    async def report(n: float, message: str) -> None:
        sent.append((n, message))
        if len(sent) >= 4:
            four.set()

    with Progress(report, heartbeat=0.3, min_gap=0.1) as progress:
        await progress.say("a")
        await progress.say("b")  # within min_gap: held, said by the loop
        await asyncio.wait_for(four.wait(), 60)
    assert [m for _, m in sent[:2]] == ["a", "b"] and sent[2][1] == "b" == sent[3][1]  # then heartbeats
    assert [n for n, _ in sent] == sorted(n for n, _ in sent)  # the progress value only grows


def test_sessions_search_finds_an_external_call_by_its_client_tool_and_result(tmp_path: Path) -> None:
    from dsh_notebook.observe.search import SearchIndex

    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    external_log(home / "sessions" / "s_ext.jsonl")
    index = SearchIndex(home)
    try:
        index.refresh()
        assert [(m.seq, m.type) for m in index.search("claude execute_code")] == [(3, "external/call")]
        assert [(m.seq, m.type) for m in index.search("cells")] == [(1, "external/result")]
    finally:
        index.close()
